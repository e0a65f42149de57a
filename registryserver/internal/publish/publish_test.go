package publish_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/changelog"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/internal/publish/publishtest"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func version(v, tag string) publish.Version {
	return publish.Version{
		Namespace: "@acme", Segments: []string{"features", "ui-kit"}, Version: v,
		Manifest: []byte(fmt.Sprintf(`{"name":"ui-kit","version":%q,"tag":%q}`, v, tag)),
	}
}

// files returns a writeFiles callback storing two files whose content
// carries tag.
func files(tag string) func(publish.PutFunc) error {
	return func(put publish.PutFunc) error {
		for _, name := range []string{"templates/a.txt", "b.json"} {
			body := name + ":" + tag
			if err := put(context.Background(), name, int64(len(body)), strings.NewReader(body)); err != nil {
				return err
			}
		}
		return nil
	}
}

func get(t *testing.T, st storage.Storage, key string) string {
	t.Helper()
	rc, _, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// keys lists st's keys but the change log's (see changes).
func keys(t *testing.T, st storage.Storage) []string {
	t.Helper()
	ks, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ks, func(k string) bool { return strings.HasPrefix(k, layout.IndexDir) })
}

// changes returns what st's change log records, oldest first.
func changes(t *testing.T, st storage.Storage) []changelog.Change {
	t.Helper()
	recs, err := changelog.Since(t.Context(), st, time.Time{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var out []changelog.Change
	for _, r := range recs {
		out = append(out, r.Change)
	}
	return out
}

func TestPublish(t *testing.T) {
	t.Parallel()
	st := memory.New()
	s := publish.New(st)
	for _, v := range []string{"1.0.0", "2.0.0", "1.5.0", "2.0.0-rc.1"} {
		if err := s.Publish(t.Context(), version(v, "x"), files("x")); err != nil {
			t.Fatalf("publish %s: %v", v, err)
		}
	}
	if got, want := get(t, st, "@acme/features/ui-kit/versions.json"), "{\n  \"versions\": [\n    \"2.0.0\",\n    \"2.0.0-rc.1\",\n    \"1.5.0\",\n    \"1.0.0\"\n  ]\n}\n"; got != want {
		t.Errorf("versions.json: got %q, want %q", got, want)
	}
	if got, want := get(t, st, "@acme/features/ui-kit/1.5.0/templates/a.txt"), "templates/a.txt:x"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
	if got, want := get(t, st, "@acme/features/ui-kit/1.5.0/registry.json"), string(version("1.5.0", "x").Manifest); got != want {
		t.Errorf("registry.json: got %q, want %q", got, want)
	}
	// Each committed version is one record of the change log.
	uiKit := changelog.Change{Namespace: "@acme", Path: "features/ui-kit"}
	if diff := cmp.Diff([]changelog.Change{uiKit, uiKit, uiKit, uiKit}, changes(t, st)); diff != "" {
		t.Errorf("change log (-want +got):\n%s", diff)
	}
	err := s.Publish(t.Context(), version("1.5.0", "y"), files("y"))
	if !errors.Is(err, publish.ErrVersionExists) {
		t.Fatalf("republish: got %v, want ErrVersionExists", err)
	}
	if got, want := get(t, st, "@acme/features/ui-kit/1.5.0/templates/a.txt"), "templates/a.txt:x"; got != want {
		t.Errorf("file after refused republish: got %q, want %q", got, want)
	}
	for _, k := range keys(t, st) {
		if strings.HasPrefix(k, ".publish/") {
			t.Errorf("claim %s left behind", k)
		}
	}
}

func TestPublishRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := publish.New(memory.New())
	bad := version("1.0.0", "x")
	bad.Segments = []string{"../x"}
	if err := s.Publish(t.Context(), bad, files("x")); err == nil {
		t.Error("bad segment: got nil, want an error")
	}
	err := s.Publish(t.Context(), version("1.0.0", "x"), func(put publish.PutFunc) error {
		return put(t.Context(), "../escape", 1, strings.NewReader("x"))
	})
	if err == nil {
		t.Error("escaping file name: got nil, want an error")
	}
}

// concurrencyBackends are the storages concurrent publishing must be safe
// on: one with conditional writes, one with only the claim locks, and disk.
func concurrencyBackends(t *testing.T) map[string]storage.Storage {
	return map[string]storage.Storage{"conditional": memory.New(), "locks only": plain{memory.New()}, "disk": newDisk(t)}
}

// A version published under every concurrency pattern the handler can see.
func TestPublishConcurrentSameVersion(t *testing.T) {
	t.Parallel()
	for name, st := range concurrencyBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := publish.New(st)
			const n = 20
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					tag := fmt.Sprint(i)
					errs[i] = s.Publish(t.Context(), version("1.0.0", tag), files(tag))
				})
			}
			close(start)
			wg.Wait()
			winner := publishtest.OneWinner(t, errs)
			tag := fmt.Sprint(winner)
			if got, want := get(t, st, "@acme/features/ui-kit/1.0.0/registry.json"), string(version("1.0.0", tag).Manifest); got != want {
				t.Errorf("registry.json: got %q, want the winner's %q", got, want)
			}
			for _, f := range []string{"templates/a.txt", "b.json"} {
				if got, want := get(t, st, "@acme/features/ui-kit/1.0.0/"+f), f+":"+tag; got != want {
					t.Errorf("%s: got %q, want the winner's %q", f, got, want)
				}
			}
		})
	}
}

// The digest index is stored with the version, before its commit point,
// and names the sha-256 of the manifest and of every file as stored.
func TestPublishStoresDigestIndex(t *testing.T) {
	t.Parallel()
	st := memory.New()
	v := version("1.0.0", "x")
	if err := publish.New(st).Publish(t.Context(), v, files("x")); err != nil {
		t.Fatal(err)
	}
	idx, err := registry.ParseDigestIndex([]byte(get(t, st, "@acme/features/ui-kit/1.0.0/"+layout.DigestIndexFile)))
	if err != nil {
		t.Fatal(err)
	}
	want := &registry.DigestIndex{
		Namespace: "@acme", Path: "features/ui-kit", Version: "1.0.0",
		Manifest: registry.Digest(v.Manifest),
		Files: map[string]string{
			"templates/a.txt": registry.Digest([]byte("templates/a.txt:x")),
			"b.json":          registry.Digest([]byte("b.json:x")),
		},
	}
	if diff := cmp.Diff(want, idx); diff != "" {
		t.Errorf("digest index (-want +got):\n%s", diff)
	}
	// A package may not declare a file that would overwrite the index.
	err = publish.New(st).Publish(t.Context(), version("2.0.0", "x"), func(put publish.PutFunc) error {
		return put(t.Context(), layout.DigestIndexFile, 2, strings.NewReader("{}"))
	})
	if err == nil || !strings.Contains(err.Error(), "refusing file path") {
		t.Errorf("declaring %s: got %v, want it refused", layout.DigestIndexFile, err)
	}
}

func TestPublishConcurrentVersionsAllListed(t *testing.T) {
	t.Parallel()
	for name, st := range concurrencyBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := publish.New(st)
			const n = 20
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					if err := s.Publish(t.Context(), version(fmt.Sprintf("1.%d.0", i), "x"), files("x")); err != nil {
						t.Errorf("publish 1.%d.0: %v", i, err)
					}
				})
			}
			wg.Wait()
			got := get(t, st, "@acme/features/ui-kit/versions.json")
			for i := range n {
				if !strings.Contains(got, fmt.Sprintf(`"1.%d.0"`, i)) {
					t.Errorf("versions.json lost 1.%d.0: %s", i, got)
				}
			}
		})
	}
}

// A write failing at any point leaves nothing of the new version visible
// and versions.json as it was.
func TestPublishFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, cond := range []bool{true, false} {
		// claim (only with conditional writes), 2 files, the digest
		// index, registry.json, versions.json
		writes := 5
		if cond {
			writes = 6
		}
		for n := 1; n <= writes; n++ {
			t.Run(fmt.Sprintf("conditional=%v/fail write %d", cond, n), func(t *testing.T) {
				t.Parallel()
				mem := memory.New()
				base := publish.New(mem)
				if err := base.Publish(t.Context(), version("0.9.0", "old"), files("old")); err != nil {
					t.Fatal(err)
				}
				before := keys(t, mem)
				beforeVersions := get(t, mem, "@acme/features/ui-kit/versions.json")

				f := &failing{Storage: mem, failAt: int64(n)}
				var st storage.Storage = f
				if !cond {
					st = plain{f}
				}
				err := publish.New(st).Publish(t.Context(), version("1.0.0", "new"), files("new"))
				if err == nil {
					t.Fatalf("got nil, want the injected error")
				}
				if !errors.Is(err, errInjected) {
					t.Errorf("got %v, want it to wrap the injected error", err)
				}
				if diff := cmp.Diff(before, keys(t, mem)); diff != "" {
					t.Errorf("keys after failed publish (-before +after):\n%s", diff)
				}
				if got := get(t, mem, "@acme/features/ui-kit/versions.json"); got != beforeVersions {
					t.Errorf("versions.json: got %q, want %q", got, beforeVersions)
				}
				// And the version can be published afterwards.
				if err := publish.New(mem).Publish(t.Context(), version("1.0.0", "retry"), files("retry")); err != nil {
					t.Errorf("retry after failure: %v", err)
				}
			})
		}
	}
}

func TestPublishStaleClaim(t *testing.T) {
	t.Parallel()
	st := memory.New()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	lock := ".publish/@acme/features/ui-kit/1.0.0.lock"
	claim := fmt.Sprintf(`{"id":"dead","started":%q}`, now.Add(-time.Minute).Format(time.RFC3339))
	if err := st.Put(t.Context(), lock, strings.NewReader(claim), -1); err != nil {
		t.Fatal(err)
	}
	debris := "@acme/features/ui-kit/1.0.0/half-written.txt"
	if err := st.Put(t.Context(), debris, strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	fresh := publish.New(st, publish.WithClock(clock), publish.WithStaleAfter(10*time.Minute))
	if err := fresh.Publish(t.Context(), version("1.0.0", "a"), files("a")); !errors.Is(err, publish.ErrVersionExists) {
		t.Fatalf("claim 1 minute old: got %v, want ErrVersionExists", err)
	}
	if _, err := st.Stat(t.Context(), "@acme/features/ui-kit/1.0.0/registry.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("registry.json: got %v, want not found", err)
	}
	later := publish.New(st, publish.WithClock(func() time.Time { return now.Add(time.Hour) }), publish.WithStaleAfter(10*time.Minute))
	if err := later.Publish(t.Context(), version("1.0.0", "b"), files("b")); err != nil {
		t.Fatalf("stale claim: got %v, want it taken over", err)
	}
	if _, err := st.Stat(t.Context(), debris); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("debris of the dead publish: got %v, want it removed", err)
	}
	if _, err := st.Stat(t.Context(), lock); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("claim: got %v, want it released", err)
	}
}

func TestPublishRepairsUnlistedVersion(t *testing.T) {
	t.Parallel()
	st := memory.New()
	// A publisher died after its commit, before listing: registry.json
	// exists, versions.json does not name it, no live claim.
	if err := st.Put(t.Context(), "@acme/features/ui-kit/3.0.0/registry.json", strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}
	err := publish.New(st).Publish(t.Context(), version("3.0.0", "x"), files("x"))
	if !errors.Is(err, publish.ErrVersionExists) {
		t.Fatalf("got %v, want ErrVersionExists", err)
	}
	if got := get(t, st, "@acme/features/ui-kit/versions.json"); !strings.Contains(got, `"3.0.0"`) {
		t.Errorf("versions.json: got %q, want it repaired to list 3.0.0", got)
	}
}

func TestPublishPreset(t *testing.T) {
	t.Parallel()
	st := memory.New()
	s := publish.New(st)
	doc := func(v string) []byte { return []byte(fmt.Sprintf(`{"name":"web","version":%q,"registries":["a"]}`, v)) }
	steps := []struct {
		version, wantLatest string
		wantErr             error
	}{
		{"1.0.0", "1.0.0", nil},
		{"1.1.0", "1.1.0", nil},
		{"1.0.5", "1.1.0", nil},
		{"1.1.0", "1.1.0", publish.ErrVersionExists},
		{"1.0.0", "1.1.0", publish.ErrVersionExists},
		{"2.0.0-beta.1", "2.0.0-beta.1", nil},
	}
	for _, step := range steps {
		err := s.PublishPreset(t.Context(), "web", step.version, doc(step.version))
		if !errors.Is(err, step.wantErr) {
			t.Fatalf("publish %s: got %v, want %v", step.version, err, step.wantErr)
		}
		if got, want := get(t, st, "presets/web/preset.json"), string(doc(step.wantLatest)); got != want {
			t.Errorf("after %s: latest got %s, want %s", step.version, got, want)
		}
	}
	if got, want := get(t, st, "presets/web/1.0.5/preset.json"), string(doc("1.0.5")); got != want {
		t.Errorf("versioned: got %s, want %s", got, want)
	}

	// A seeded preset (unversioned file only) counts as existing.
	if err := st.Put(t.Context(), "presets/node/preset.json", bytes.NewReader(doc("1.0.0")), -1); err != nil {
		t.Fatal(err)
	}
	if err := s.PublishPreset(t.Context(), "node", "1.0.0", doc("1.0.0")); !errors.Is(err, publish.ErrVersionExists) {
		t.Errorf("seeded version: got %v, want ErrVersionExists", err)
	}
}

func TestPublishPresetConcurrent(t *testing.T) {
	t.Parallel()
	st := memory.New()
	s := publish.New(st)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			v := fmt.Sprintf("1.%d.0", i)
			if err := s.PublishPreset(t.Context(), "web", v, []byte(`{"version":"`+v+`"}`)); err != nil {
				t.Errorf("publish %s: %v", v, err)
			}
		})
	}
	wg.Wait()
	if got, want := get(t, st, "presets/web/preset.json"), `{"version":"1.19.0"}`; got != want {
		t.Errorf("latest: got %s, want %s", got, want)
	}
}

func newDisk(t *testing.T) storage.Storage {
	t.Helper()
	st, err := disk.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var errInjected = errors.New("injected write failure")

// failing fails its failAt-th write (Put or PutIf, counted together).
type failing struct {
	*memory.Storage
	failAt int64
	n      atomic.Int64
}

func (f *failing) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if f.n.Add(1) == f.failAt {
		return errInjected
	}
	return f.Storage.Put(ctx, key, r, size)
}

func (f *failing) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	if f.n.Add(1) == f.failAt {
		return "", errInjected
	}
	return f.Storage.PutIf(ctx, key, r, size, ifMatch)
}

// plain hides every optional capability of the storage it wraps.
type plain struct{ s storage.Storage }

func (p plain) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	return p.s.Get(ctx, key)
}
func (p plain) Stat(ctx context.Context, key string) (storage.Info, error) { return p.s.Stat(ctx, key) }
func (p plain) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	return p.s.Put(ctx, key, r, size)
}
func (p plain) Delete(ctx context.Context, key string) error { return p.s.Delete(ctx, key) }
func (p plain) List(ctx context.Context, prefix string) ([]string, error) {
	return p.s.List(ctx, prefix)
}
