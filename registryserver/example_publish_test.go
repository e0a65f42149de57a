package registryserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/webhook"
)

// A server that accepts uploads from its admin token and tells a webhook
// receiver about every new version.
func ExampleWithWebhooks() {
	events := make(chan string, 2)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if webhook.Verify("hook-secret", body, r.Header.Get("X-Webhook-Signature")) {
			events <- r.Header.Get("X-Webhook-Event")
		}
	}))
	defer recv.Close()

	h, err := registryserver.New(
		registryserver.WithAdminToken("admin-token"),
		registryserver.WithWebhooks([]webhook.Hook{{
			URL: recv.URL, Secret: "hook-secret", Enabled: true,
			Events: []string{webhook.EventUploaded, webhook.EventVersionCreated},
		}}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{"name":"hello","namespace":"@main",
	  "type":"registry:feature","version":"1.0.0","priority":4,
	  "files":[{"target":"hello.txt","type":"registry:docs","path":"hello.txt"}]}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)

	c, _ := registryclient.New(srv.URL, registryclient.WithToken("admin-token"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.Publish(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Path)
	_ = h.Close() // drains the webhook queue
	close(events)
	for ev := range events {
		fmt.Println(ev)
	}
	// Output:
	// @main/features/hello/1.0.0
	// uploaded
	// version.created
}
