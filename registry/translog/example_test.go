package translog_test

import (
	"fmt"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
)

// A record is the text a version's leaf hash is taken over.
func ExampleRecord_Marshal() {
	r := translog.Record{
		Namespace: "@acme", Path: "features/ui-kit", Version: "1.2.0",
		IndexDigest: registry.Digest([]byte("{}")),
		Time:        time.Date(2026, 12, 7, 1, 2, 3, 0, time.UTC),
	}
	text, _ := r.Marshal()
	fmt.Print(string(text))
	// Output:
	// jig-version-record v1
	// @acme/features/ui-kit@1.2.0
	// index sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a
	// time 2026-12-07T01:02:03Z
}

// Each namespace has a log of its own; a checkpoint's origin names it.
func ExampleOrigin() {
	fmt.Println(translog.Origin("registry.example.com", "@acme"))
	// Output: registry.example.com/@acme
}
