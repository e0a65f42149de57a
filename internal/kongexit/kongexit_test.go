package kongexit_test

import (
	"io"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/jigkit/jig/internal/kongexit"
)

// parse parses args and returns kong's exit code when kong exited (after
// --help, --version, or FatalIfErrorf on a parse error), and 2 otherwise.
func parse(args ...string) (code int) {
	defer kongexit.Recover(&code)
	var cli struct {
		Version kong.VersionFlag
		Name    string
	}
	p, err := kong.New(&cli, kongexit.Option(), kong.Writers(io.Discard, io.Discard), kong.Vars{"version": "1"})
	if err != nil {
		return -1
	}
	_, err = p.Parse(args)
	p.FatalIfErrorf(err)
	return 2
}

func TestRecover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"--name", "x"}, 2},
		{[]string{"--help"}, 0},
		{[]string{"--version"}, 0},
		{[]string{"--bogus"}, 80}, // kong's exit code for a usage error
	} {
		if got := parse(tt.args...); got != tt.want {
			t.Errorf("parse(%q) = %d, want %d", tt.args, got, tt.want)
		}
	}
}

func TestRecoverOtherPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the original panic boom", r)
		}
	}()
	func() (code int) {
		defer kongexit.Recover(&code)
		panic("boom")
	}()
	t.Error("the panic was swallowed")
}
