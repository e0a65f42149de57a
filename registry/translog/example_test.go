package translog_test

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/note"

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

// A witness cosigns a checkpoint it checked: a cosignature/v1 line is
// added to the note; a client counts the valid cosignatures of the
// witnesses it trusts.
func ExampleCosigner() {
	seed := make([]byte, ed25519.SeedSize) // a real witness: translog.GenerateCosignerKey
	w := translog.NewCosignerFromKey("witness.example.com", ed25519.NewKeyFromSeed(seed)).At(time.Unix(1_800_000_000, 0))
	cp := translog.Checkpoint{Origin: "registry.example.com/@acme", Size: 42}
	cp.Hash[0] = 1
	cosigned, _ := note.Sign(&note.Note{Text: string(cp.Marshal())}, w)
	fmt.Print(string(cosigned))

	policy, _ := translog.NewWitnessPolicy([]string{w.VerifierKey()}, 1)
	valid, err := policy.Check(cosigned, cp)
	fmt.Println(valid, err)
	// Output:
	// registry.example.com/@acme
	// 42
	// AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
	//
	// — witness.example.com XOACRQAAAABrSdIAbPI+W+zkHoJzKS/mVc/mS8+9wMsE3szSEmHxpA3Z/o4zFKNqAE1SuoaHgmNDXFtozVnaqlDCOB8wmtYNiojMDA==
	// 1 <nil>
}
