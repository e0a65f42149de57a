package termtext_test

import (
	"fmt"

	"github.com/jigkit/jig/internal/termtext"
)

// Text from a request or a manifest cannot clear the line it is printed
// on, move the cursor or reorder what is shown.
func ExampleEscape() {
	fmt.Println(termtext.Escape("GET /registries/@team/\x1b[2Jfake"))
	fmt.Println(termtext.Escape("txt.exe\u202egnp."))
	fmt.Print(termtext.EscapeLines("one\n\ttwo\r\n"))
	// Output:
	// GET /registries/@team/\x1b[2Jfake
	// txt.exe\u202egnp.
	// one
	// 	two\r
}
