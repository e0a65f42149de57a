package testenv_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// recorder is a testing.TB that records how a test would end.
type recorder struct {
	testing.TB
	how string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.how = "skipped"; runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.how = "failed"; runtime.Goexit() }

// run calls f as a test body and reports how it ended.
func run(f func(testing.TB)) string {
	r := &recorder{how: "ran"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.how
}

// ExampleRedis shows the rule every function follows: without
// JIG_TEST_REDIS_URL a test skips, unless CI=true, where it fails.
func ExampleRedis() {
	defer restore("JIG_TEST_REDIS_URL", "CI")()
	os.Unsetenv("JIG_TEST_REDIS_URL")
	redisTest := func(t testing.TB) { _ = testenv.Redis(t) }

	os.Unsetenv("CI")
	fmt.Println("unset:", run(redisTest))
	os.Setenv("CI", "true")
	fmt.Println("unset, CI=true:", run(redisTest))
	os.Setenv("JIG_TEST_REDIS_URL", "redis://127.0.0.1:6399/0")
	fmt.Println("set, CI=true:", run(redisTest))
	// Output:
	// unset: skipped
	// unset, CI=true: failed
	// set, CI=true: ran
}

// restore returns a function that puts the named variables back.
func restore(names ...string) func() {
	type saved struct {
		v  string
		ok bool
	}
	old := map[string]saved{}
	for _, n := range names {
		v, ok := os.LookupEnv(n)
		old[n] = saved{v, ok}
	}
	return func() {
		for n, s := range old {
			if s.ok {
				os.Setenv(n, s.v)
			} else {
				os.Unsetenv(n)
			}
		}
	}
}
