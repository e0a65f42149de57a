package publish_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver/internal/changelog"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/internal/publish/publishtest"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

const (
	claimKey  = ".publish/@acme/features/ui-kit/1.0.0.lock"
	debrisKey = "@acme/features/ui-kit/1.0.0/templates/half-written.txt"
	deadOwner = "0123456789abcdef0123456789abcdef"
)

var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// crashed leaves in st what a publisher killed while writing 1.0.0 leaves:
// its claim (last heartbeat age ago) and one of its files.
func crashed(t *testing.T, st storage.Storage, claim string) {
	t.Helper()
	for k, v := range map[string]string{claimKey: claim, debrisKey: "half"} {
		if err := st.Put(t.Context(), k, strings.NewReader(v), -1); err != nil {
			t.Fatal(err)
		}
	}
}

func claimOf(owner string, heartbeat time.Time) string {
	b, _ := json.Marshal(map[string]any{"id": "attempt-1", "owner": owner, "started": heartbeat, "heartbeat": heartbeat})
	return string(b)
}

func livenessOf(dead ...string) func(string) publish.Liveness {
	return func(owner string) publish.Liveness {
		for _, d := range dead {
			if owner == d {
				return publish.LivenessDead
			}
		}
		return publish.LivenessUnknown
	}
}

func backends(t *testing.T) map[string]storage.Storage {
	return map[string]storage.Storage{"memory": memory.New(), "disk": newDisk(t)}
}

// TestPublishTakesOverClaimOfGonePublisher: a retry after a crash succeeds
// at once when the crashed owner is known dead or its heartbeat is older
// than the TTL, and gets ErrVersionExists while the claim is live.
func TestPublishTakesOverClaimOfGonePublisher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		claim string
		dead  []string
		clock time.Time
		want  error
	}{
		{"owner dead, fresh heartbeat", claimOf(deadOwner, epoch), []string{deadOwner}, epoch, nil},
		{"owner unknown, fresh heartbeat", claimOf(deadOwner, epoch), nil, epoch.Add(10 * time.Second), publish.ErrVersionExists},
		{"owner unknown, heartbeat older than the TTL", claimOf(deadOwner, epoch), nil, epoch.Add(31 * time.Second), nil},
		{"garbage claim, fresh", "\x00not a claim", nil, epoch.Add(-time.Hour), publish.ErrVersionExists},
		{"garbage claim, older than the TTL", "\x00not a claim", nil, epoch.Add(time.Hour), nil},
	}
	for _, tt := range tests {
		for name, st := range backends(t) {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				crashed(t, st, tt.claim)
				clock := tt.clock
				if strings.HasPrefix(tt.name, "garbage") {
					// The storage stamps the claim with the real time.
					clock = time.Now().Add(clock.Sub(epoch))
				}
				s := publish.New(st, publish.WithClock(func() time.Time { return clock }),
					publish.WithOwner("ffffffffffffffffffffffffffffffff", livenessOf(tt.dead...)))
				err := s.Publish(t.Context(), version("1.0.0", "retry"), files("retry"))
				if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
					t.Fatalf("Publish = %v, want %v", err, tt.want)
				}
				_, derr := st.Stat(t.Context(), debrisKey)
				_, cerr := st.Stat(t.Context(), claimKey)
				if tt.want == nil {
					if !errors.Is(derr, storage.ErrNotFound) || !errors.Is(cerr, storage.ErrNotFound) {
						t.Errorf("after the takeover: debris %v, claim %v; want both removed", derr, cerr)
					}
					if got := get(t, st, "@acme/features/ui-kit/1.0.0/templates/a.txt"); got != "templates/a.txt:retry" {
						t.Errorf("published file = %q, want the retry's", got)
					}
				} else if derr != nil || cerr != nil {
					t.Errorf("a live claim was touched: debris %v, claim %v", derr, cerr)
				}
			})
		}
	}
}

// TestConcurrentTakeoverOneWinner: publishers racing to take over the
// claim of a dead publisher: exactly one wins and its files are stored.
func TestConcurrentTakeoverOneWinner(t *testing.T) {
	t.Parallel()
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			crashed(t, st, claimOf(deadOwner, epoch))
			const n = 6
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					s := publish.New(st, publish.WithClock(func() time.Time { return epoch }),
						publish.WithOwner(fmt.Sprintf("%032x", i+1), livenessOf(deadOwner)))
					tag := fmt.Sprint(i)
					<-start
					errs[i] = s.Publish(t.Context(), version("1.0.0", tag), files(tag))
				})
			}
			close(start)
			wg.Wait()
			winner := publishtest.OneWinner(t, errs)
			if got, want := get(t, st, "@acme/features/ui-kit/1.0.0/b.json"), fmt.Sprintf("b.json:%d", winner); got != want {
				t.Errorf("stored file = %q, want the winner's %q", got, want)
			}
		})
	}
}

// TestHeartbeatLostClaim: a publisher that stalls past its TTL loses its
// claim to another one. The heartbeat notices, the stalled publish ends
// with ErrClaimLost without committing or removing anything of the new
// holder's, and the new holder's publish completes.
func TestHeartbeatLostClaim(t *testing.T) {
	t.Parallel()
	st := memory.New()
	// A TTL long enough that a loaded machine never misses a heartbeat
	// (each may take a third of it).
	stalled := publish.New(st, publish.WithClock(func() time.Time { return epoch }), publish.WithClaimTTL(3*time.Second))
	errc := make(chan error, 1)
	go func() {
		errc <- stalled.Publish(t.Context(), version("1.0.0", "stalled"), func(put publish.PutFunc) error {
			if err := put(t.Context(), "b.json", 1, strings.NewReader("s")); err != nil {
				return err
			}
			// Stall until the claim is taken over; the heartbeat ends
			// the publish's context.
			for {
				if err := put(t.Context(), "c.json", 1, strings.NewReader("s")); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			}
		})
	}()
	waitFor(t, func() bool { return seq(t, st) >= 1 }) // the heartbeat runs
	later := publish.New(st, publish.WithClock(func() time.Time { return epoch.Add(time.Hour) }))
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			// The stalled heartbeat may change the claim between
			// reading it and taking it over: then try again.
			err := later.Publish(t.Context(), version("1.0.0", "later"), func(put publish.PutFunc) error {
				<-release
				return files("later")(put)
			})
			if !errors.Is(err, publish.ErrVersionExists) || t.Context().Err() != nil {
				done <- err
				return
			}
		}
	}()
	if err := <-errc; !errors.Is(err, publish.ErrClaimLost) {
		t.Fatalf("stalled publish = %v, want ErrClaimLost", err)
	}
	if _, err := st.Stat(t.Context(), claimKey); err != nil {
		t.Errorf("the new holder's claim: %v, want it in place", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("publish of the new holder: %v", err)
	}
	want := []string{
		"@acme/features/ui-kit/1.0.0/.jig-digests.json", "@acme/features/ui-kit/1.0.0/b.json",
		"@acme/features/ui-kit/1.0.0/registry.json", "@acme/features/ui-kit/1.0.0/templates/a.txt",
		"@acme/features/ui-kit/versions.json",
	}
	if diff := cmp.Diff(want, keys(t, st)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if got := get(t, st, "@acme/features/ui-kit/1.0.0/b.json"); got != "b.json:later" {
		t.Errorf("b.json = %q, want the new holder's", got)
	}
}

// seq returns the heartbeat count of the claim, -1 when there is none.
func seq(t *testing.T, st storage.Storage) int64 {
	rc, _, err := st.Get(context.Background(), claimKey)
	if err != nil {
		return -1
	}
	defer rc.Close()
	var doc struct{ Seq int64 }
	_ = json.NewDecoder(rc).Decode(&doc)
	return doc.Seq
}

func waitFor(t *testing.T, cond func() bool) {
	for !cond() {
		select {
		case <-t.Context().Done():
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// TestRecover: recovery finishes what gone publishers left and leaves
// live claims alone.
func TestRecover(t *testing.T) {
	t.Parallel()
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			put := func(k, v string) {
				if err := st.Put(ctx, k, strings.NewReader(v), -1); err != nil {
					t.Fatal(err)
				}
			}
			// Dead while writing 1.0.0: two files, no registry.json.
			put(".publish/@acme/a/1.0.0.lock", claimOf(deadOwner, epoch))
			put("@acme/a/1.0.0/x.txt", "x")
			put("@acme/a/1.0.0/d/y.txt", "y")
			// Dead after committing 2.0.0, before listing it.
			put(".publish/@acme/a/2.0.0.lock", claimOf(deadOwner, epoch))
			put("@acme/a/2.0.0/registry.json", `{"name":"a","version":"2.0.0"}`)
			// Live on another host: fresh heartbeat.
			put(".publish/@acme/b/1.0.0.lock", claimOf("another-live-owner", epoch))
			put("@acme/b/1.0.0/z.txt", "z")
			// Garbage in the claims folder.
			put(".publish/junk", "\x00")

			s := publish.New(st, publish.WithClock(func() time.Time { return epoch.Add(10 * time.Second) }),
				publish.WithOwner("ffffffffffffffffffffffffffffffff", livenessOf(deadOwner)))
			rec, err := s.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := (publish.Recovery{Claims: 2, Removed: 2, Listed: 1}); rec != want {
				t.Errorf("Recover = %+v, want %+v", rec, want)
			}
			want := []string{
				".publish/@acme/b/1.0.0.lock", ".publish/junk",
				"@acme/a/2.0.0/registry.json", "@acme/a/versions.json",
				"@acme/b/1.0.0/z.txt",
			}
			if diff := cmp.Diff(want, keys(t, st)); diff != "" {
				t.Errorf("keys after Recover (-want +got):\n%s", diff)
			}
			// The version it listed is in the change log, for other
			// replicas' indexes.
			if diff := cmp.Diff([]changelog.Change{{Namespace: "@acme", Path: "a"}}, changes(t, st)); diff != "" {
				t.Errorf("change log after Recover (-want +got):\n%s", diff)
			}
			// An hour later the garbage and the live claim (which has
			// stopped beating) go too.
			s = publish.New(st, publish.WithClock(func() time.Time { return time.Now().Add(time.Hour) }))
			if _, err := s.Recover(ctx); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[2:4], keys(t, st)); diff != "" {
				t.Errorf("keys after the second Recover (-want +got):\n%s", diff)
			}
		})
	}
}
