package shutdown

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// forever is a grace period no test waits for.
const forever = time.Hour

func TestRunReturnsTheFunctionsCode(t *testing.T) {
	t.Parallel()
	sigc := make(chan os.Signal, 2)
	var stderr bytes.Buffer
	got := run(sigc, "jig", forever, &stderr, func(context.Context) int { return 3 })
	if got != 3 {
		t.Errorf("got exit code %d, want 3", got)
	}
	if stderr.Len() != 0 {
		t.Errorf("got stderr %q, want nothing", stderr.String())
	}
}

func TestRunCancelsOnTheFirstSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig  os.Signal
		want int
		msg  string
	}{
		{syscall.SIGTERM, 143, "terminated (SIGTERM)"},
		{os.Interrupt, 130, "interrupted (SIGINT)"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			sigc := make(chan os.Signal, 2)
			var stderr bytes.Buffer
			var cause error
			got := run(sigc, "jig", forever, &stderr, func(ctx context.Context) int {
				sigc <- tc.sig
				<-ctx.Done()
				cause = context.Cause(ctx)
				return 0 // a command that stopped cleanly
			})
			if got != tc.want {
				t.Errorf("got exit code %d, want %d", got, tc.want)
			}
			var se *SignalError
			if !errors.As(cause, &se) || !errors.Is(cause, context.Canceled) || cause.Error() != tc.msg {
				t.Errorf("got cause %v, want a *SignalError %q matching context.Canceled", cause, tc.msg)
			}
			if stderr.Len() != 0 {
				t.Errorf("got stderr %q, want nothing (the command stopped in time)", stderr.String())
			}
		})
	}
}

func TestRunAbandonsABlockedFunction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		grace time.Duration
		sigs  []os.Signal
		want  int
	}{
		// The grace period runs out.
		{"grace", time.Millisecond, []os.Signal{syscall.SIGTERM}, 143},
		// A second signal ends it at once; the first decides the code.
		{"second signal", forever, []os.Signal{os.Interrupt, syscall.SIGTERM}, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sigc := make(chan os.Signal, 2)
			block := make(chan struct{})
			defer close(block)
			var stderr bytes.Buffer
			got := run(sigc, "jig", tc.grace, &stderr, func(ctx context.Context) int {
				for _, s := range tc.sigs {
					sigc <- s
				}
				<-block // ignores ctx, as a read of a FIFO would
				return 0
			})
			if got != tc.want {
				t.Errorf("got exit code %d, want %d", got, tc.want)
			}
			if !strings.Contains(stderr.String(), "jig: stopped by ") {
				t.Errorf("got stderr %q, want it to say jig stopped", stderr.String())
			}
		})
	}
}

func TestSetGrace(t *testing.T) {
	t.Parallel()
	sigc := make(chan os.Signal, 2)
	block := make(chan struct{})
	defer close(block)
	got := run(sigc, "jig-server", forever, &bytes.Buffer{}, func(ctx context.Context) int {
		SetGrace(ctx, time.Millisecond)
		sigc <- syscall.SIGTERM
		<-block
		return 0
	})
	if got != 143 {
		t.Errorf("got exit code %d, want 143", got)
	}
}

func TestEnter(t *testing.T) {
	t.Parallel()
	// Outside Run only ctx counts.
	leave, err := Enter(t.Context())
	if err != nil {
		t.Fatalf("Enter outside Run: %v", err)
	}
	leave()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Enter(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Enter with a cancelled context: got %v, want context.Canceled", err)
	}
	// Once stopping, no step begins.
	g := &guard{}
	gctx := context.WithValue(t.Context(), guardKey{}, g)
	g.stop(forever) // no step in progress: returns at once
	if _, err := Enter(gctx); !errors.Is(err, ErrStopping) {
		t.Errorf("Enter while stopping: got %v, want ErrStopping", err)
	}
}

// TestStopWaitsForSteps checks that the exit waits for a step in progress:
// stop cannot return while a step is active (its limit is an hour).
func TestStopWaitsForSteps(t *testing.T) {
	t.Parallel()
	g := &guard{}
	ctx := context.WithValue(t.Context(), guardKey{}, g)
	leave, err := Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leave2, err := Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { g.stop(forever); close(stopped) }()
	for !g.isStopping() {
		time.Sleep(time.Millisecond)
	}
	leave()
	leave() // a second call is a no-op
	select {
	case <-stopped:
		t.Fatal("stop returned while a step was still in progress")
	default:
	}
	leave2()
	<-stopped
}

func (g *guard) isStopping() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopping
}
