// Package shutdown runs a program's main function so that SIGINT and
// SIGTERM end the program promptly, whatever the function is blocked on,
// without cutting an atomic step in half.
//
// [Run] calls the function in a goroutine with a context that the first
// signal cancels. The program then ends when the function returns, or
// when the grace period after the first signal runs out, or at once on a
// second signal, whichever comes first; a function still blocked (on a
// FIFO, a hung mount, a server that never answers) is abandoned. The exit
// code after a signal is 128 plus its number: 130 for SIGINT, 143 for
// SIGTERM.
//
// Code that changes several files as one step brackets the step with
// [Enter] and the returned leave function. Before exiting, [Run] waits for
// the steps in progress to finish (at most [StepLimit]) and lets no new one
// begin, so a project is never left with half of a step applied.
//
//	func main() {
//		os.Exit(shutdown.Run("jig", shutdown.Grace, os.Stderr, func(ctx context.Context) int {
//			return cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
//		}))
//	}
package shutdown

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Grace is how long a command may take to stop cleanly after the first
// signal before it is abandoned. A cancelled command stops in
// milliseconds; the rest of the two seconds a user may expect is left for
// the exit itself.
const Grace = time.Second

// StepLimit bounds how long the exit waits for the atomic steps in
// progress ([Enter]) once the program is abandoned. A step only renames
// files already written, so it takes milliseconds unless the file system
// itself hangs.
const StepLimit = 5 * time.Second

// ErrStopping is returned by [Enter] once the program is stopping: the
// step must not begin.
var ErrStopping = errors.New("stopping: a signal asked the program to end")

// Run runs fn until it returns or a signal ends the program (see the
// package documentation) and returns the exit code: fn's, or 128 plus the
// number of the first signal. name and stderr are for the one line
// printed when fn is abandoned.
func Run(name string, grace time.Duration, stderr io.Writer, fn func(ctx context.Context) int) int {
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	return run(sigc, name, grace, stderr, fn)
}

// run is [Run] with the signals coming from sigc.
func run(sigc <-chan os.Signal, name string, grace time.Duration, stderr io.Writer, fn func(ctx context.Context) int) int {
	g := &guard{grace: grace}
	ctx, cancel := context.WithCancelCause(context.WithValue(context.Background(), guardKey{}, g))
	defer cancel(nil)
	done := make(chan int, 1)
	go func() { done <- fn(ctx) }()

	var first os.Signal
	var deadline <-chan time.Time
	for first == nil || deadline != nil {
		select {
		case code := <-done:
			if first != nil {
				return exitCode(first)
			}
			return code
		case s := <-sigc:
			if first != nil {
				deadline = nil // a second signal: stop now
				break
			}
			first = s
			cancel(&SignalError{Signal: s})
			t := time.NewTimer(g.gracePeriod())
			defer t.Stop()
			deadline = t.C
		case <-deadline:
			deadline = nil
		}
	}
	// Abandon fn, but not in the middle of an atomic step.
	g.stop(StepLimit)
	select {
	case <-done: // it returned meanwhile
	default:
		fmt.Fprintf(stderr, "%s: stopped by %s without waiting for the operation in progress to finish\n", name, signalName(first))
	}
	return exitCode(first)
}

// SignalError is the cause (see [context.Cause]) of the cancellation of
// [Run]'s context.
type SignalError struct {
	Signal os.Signal
}

// Error returns e.g. "interrupted (SIGINT)".
func (e *SignalError) Error() string {
	if e.Signal == syscall.SIGTERM {
		return "terminated (SIGTERM)"
	}
	return "interrupted (" + signalName(e.Signal) + ")"
}

// Is makes a SignalError match [context.Canceled].
func (e *SignalError) Is(target error) bool { return target == context.Canceled }

// ExitCode returns the exit code of a program ended by e's signal: 128
// plus its number.
func (e *SignalError) ExitCode() int { return exitCode(e.Signal) }

func exitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return s.String()
}

// SetGrace sets how long the program run by [Run] with ctx may take to
// stop after the first signal, replacing the grace given to [Run]; a
// server sets it once its configuration is read. It has no effect once a
// signal arrived, nor outside [Run].
func SetGrace(ctx context.Context, d time.Duration) {
	if g, _ := ctx.Value(guardKey{}).(*guard); g != nil {
		g.mu.Lock()
		g.grace = d
		g.mu.Unlock()
	}
}

// guard counts the atomic steps in progress.
type guard struct {
	mu       sync.Mutex
	grace    time.Duration
	active   int
	stopping bool
	idle     chan struct{} // closed when active drops to 0 while stopping
}

type guardKey struct{}

// Enter begins an atomic step: until leave is called, a program run by
// [Run] that is abandoned after a signal waits (up to [StepLimit]) before
// it exits. It fails with ctx's error when ctx is done, and with
// [ErrStopping] once the program is exiting: the step must then not
// begin. Outside [Run] it only checks ctx. leave must be called exactly
// once; it is safe to call from any goroutine.
func Enter(ctx context.Context) (leave func(), err error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	g, _ := ctx.Value(guardKey{}).(*guard)
	if g == nil {
		return func() {}, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping {
		return nil, ErrStopping
	}
	g.active++
	var once sync.Once
	return func() { once.Do(g.leave) }, nil
}

func (g *guard) gracePeriod() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.grace
}

func (g *guard) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	if g.active == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// stop lets no new step begin and waits up to limit for those in progress.
func (g *guard) stop(limit time.Duration) {
	g.mu.Lock()
	g.stopping = true
	if g.active == 0 {
		g.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	g.idle = idle
	g.mu.Unlock()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}
