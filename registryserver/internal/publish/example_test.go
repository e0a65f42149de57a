package publish_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func ExampleStore_Publish() {
	ctx := context.Background()
	st := memory.New()
	s := publish.New(st)
	v := publish.Version{
		Namespace: "@acme", Segments: []string{"features", "ui-kit"}, Version: "1.0.0",
		Manifest: []byte(`{"name":"ui-kit","version":"1.0.0"}`),
	}
	err := s.Publish(ctx, v, func(put publish.PutFunc) error {
		return put(ctx, "templates/button.tsx", 6, strings.NewReader("export"))
	})
	fmt.Println(err)
	keys, _ := st.List(ctx, "@acme/")
	for _, k := range keys {
		fmt.Println(k)
	}
	err = s.Publish(ctx, v, func(publish.PutFunc) error { return nil })
	fmt.Println(errors.Is(err, publish.ErrVersionExists))
	// Output:
	// <nil>
	// @acme/features/ui-kit/1.0.0/.jig-digests.json
	// @acme/features/ui-kit/1.0.0/registry.json
	// @acme/features/ui-kit/1.0.0/templates/button.tsx
	// @acme/features/ui-kit/versions.json
	// true
}
