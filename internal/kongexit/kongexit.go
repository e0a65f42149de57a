// Package kongexit lets a kong parser exit (after --help or --version)
// without os.Exit: [Option] makes kong's exit unwind the stack with the
// code, and [Recover], deferred by the function that parses, turns it into
// that function's result. jig's and jig-server's Main functions use it, so
// they always return an exit code.
package kongexit

import "github.com/alecthomas/kong"

// exit carries kong's exit code out of the parser.
type exit struct{ code int }

// Option is the kong option that makes an exit recoverable by [Recover].
func Option() kong.Option {
	return kong.Exit(func(code int) { panic(exit{code}) })
}

// Recover, deferred as is (defer kongexit.Recover(&code)), sets *code to
// kong's exit code when the parser exited; any other panic goes on.
func Recover(code *int) {
	if r := recover(); r != nil {
		e, ok := r.(exit)
		if !ok {
			panic(r)
		}
		*code = e.code
	}
}
