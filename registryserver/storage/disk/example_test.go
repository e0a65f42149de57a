package disk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jig-storage-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	st, err := disk.New(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	body := `{"versions":["1.0.0"]}`
	if err := st.Put(ctx, "@main/runtimes/node/versions.json", strings.NewReader(body), int64(len(body))); err != nil {
		fmt.Println(err)
		return
	}
	rc, info, err := st.Get(ctx, "@main/runtimes/node/versions.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	fmt.Println(string(data), info.Size)

	namespaces, _ := storage.ListDir(ctx, st, "")
	fmt.Println(namespaces)

	_, _, err = st.Get(ctx, "@main/../../etc/passwd")
	fmt.Println(errors.Is(err, storage.ErrInvalidKey))
	// Output:
	// {"versions":["1.0.0"]} 22
	// [@main/]
	// true
}

func ExampleStorage_PutIf() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jig-storage-")
	defer os.RemoveAll(dir)
	st, err := disk.New(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	// Update versions.json only if nobody changed it since it was read.
	const key = "@main/runtimes/node/versions.json"
	etag, _ := st.PutIf(ctx, key, strings.NewReader(`{"versions":["1.0.0"]}`), -1, "")
	_, err = st.PutIf(ctx, key, strings.NewReader(`{"versions":["1.1.0","1.0.0"]}`), -1, etag)
	fmt.Println(err)
	_, err = st.PutIf(ctx, key, strings.NewReader(`{"versions":["1.2.0","1.0.0"]}`), -1, etag)
	fmt.Println(errors.Is(err, storage.ErrPrecondition))
	// Output:
	// <nil>
	// true
}
