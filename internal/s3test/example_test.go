package s3test_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/s3test"
)

// Every test's keys live in a prefix of its own under Area.
func ExamplePrefix() {
	t := &testing.T{}
	p := s3test.Prefix(t)
	fmt.Println(strings.HasPrefix(p, s3test.Area), strings.HasSuffix(p, "/"))
	// Output: true true
}
