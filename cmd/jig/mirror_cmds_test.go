package main_test

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// corrupt in out: copies the bundle (tar) in to out with one byte changed:
// the first byte of the first entry's content, right after its 512-byte
// header.
func cmdCorrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: corrupt in out")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(b) <= 512 {
		ts.Fatalf("%s is too short to be a bundle", args[0])
	}
	b[512] ^= 0x01
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}
