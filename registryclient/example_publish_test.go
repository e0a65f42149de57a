package registryclient_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
)

func ExampleClient_Publish() {
	ctx := context.Background()
	h, _ := registryserver.New(registryserver.WithAdminToken("admin-token"))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{"name":"hello","namespace":"@main",
	  "type":"registry:feature","version":"1.0.0","priority":4,
	  "files":[{"target":"hello.txt","type":"registry:docs","path":"hello.txt"}]}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)

	c, _ := registryclient.New(srv.URL, registryclient.WithToken("admin-token"))
	res, err := c.Publish(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Path)
	fmt.Println(res.Message)
	// Output:
	// @main/features/hello/1.0.0
	// Registry uploaded successfully
}
