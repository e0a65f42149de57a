package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func Example() {
	ctx := context.Background()
	st := memory.New()
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
	defer rc.Close()
	data, _ := io.ReadAll(rc)
	fmt.Println(string(data), info.Size)

	_, err = st.Stat(ctx, "@main/runtimes/deno/versions.json")
	fmt.Println(errors.Is(err, storage.ErrNotFound))
	// Output:
	// {"versions":["1.0.0"]} 22
	// true
}

func ExampleStorage_PutIf() {
	ctx := context.Background()
	st := memory.New()
	const key = "@main/runtimes/node/1.0.0/registry.json"
	// Create-only: the first publish wins, the second gets ErrPrecondition.
	_, err := st.PutIf(ctx, key, strings.NewReader("{}"), 2, "")
	fmt.Println(err)
	_, err = st.PutIf(ctx, key, strings.NewReader("{}"), 2, "")
	fmt.Println(errors.Is(err, storage.ErrPrecondition))
	// Output:
	// <nil>
	// true
}
