package s3_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/internal/publish/publishtest"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// replicas returns n stores with their own S3 clients on one key prefix,
// as n jig-server replicas sharing a bucket have.
func replicas(t *testing.T, n int) []*s3.Storage {
	t.Helper()
	first := s3test.New(t)
	out := []*s3.Storage{first}
	for range n - 1 {
		cfg := s3test.Config(t)
		cfg.Prefix = first.Prefix()
		st, err := s3.New(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

// TestReplicasPublishSameVersion: replicas publishing the same version at
// once give exactly one success; the others get ErrVersionExists, and the
// stored files are the winner's.
func TestReplicasPublishSameVersion(t *testing.T) {
	t.Parallel()
	s3test.Config(t)
	sts := replicas(t, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(sts))
	start := make(chan struct{})
	for i, st := range sts {
		wg.Go(func() {
			pub := publish.New(st)
			v := publish.Version{
				Namespace: "@acme", Segments: []string{"features", "ui-kit"}, Version: "1.0.0",
				Manifest: []byte(fmt.Sprintf(`{"name":"ui-kit","version":"1.0.0","description":"replica %d"}`, i)),
			}
			<-start
			errs[i] = pub.Publish(t.Context(), v, func(put publish.PutFunc) error {
				body := fmt.Sprintf("replica %d", i)
				return put(t.Context(), "templates/button.tsx", int64(len(body)), strings.NewReader(body))
			})
		})
	}
	close(start)
	wg.Wait()
	winner := publishtest.OneWinner(t, errs)
	rc, _, err := sts[0].Get(t.Context(), "@acme/features/ui-kit/1.0.0/templates/button.tsx")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if want := fmt.Sprintf("replica %d", winner); string(data) != want {
		t.Errorf("stored file = %q, want the winner's %q", data, want)
	}
}

// TestReplicasPublishDifferentVersions: concurrent publishes of different
// versions through different replicas all land in versions.json.
func TestReplicasPublishDifferentVersions(t *testing.T) {
	t.Parallel()
	s3test.Config(t)
	sts := replicas(t, 3)
	const perReplica = 3
	var wg sync.WaitGroup
	var want []string
	for i, st := range sts {
		for j := range perReplica {
			want = append(want, fmt.Sprintf("1.%d.%d", i, j))
		}
		wg.Go(func() {
			pub := publish.New(st)
			for j := range perReplica {
				ver := fmt.Sprintf("1.%d.%d", i, j)
				v := publish.Version{
					Namespace: "@acme", Segments: []string{"tools", "lint"}, Version: ver,
					Manifest: []byte(`{"name":"lint","version":"` + ver + `"}`),
				}
				if err := pub.Publish(t.Context(), v, func(publish.PutFunc) error { return nil }); err != nil {
					t.Errorf("replica %d publish %s: %v", i, ver, err)
				}
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	rc, _, err := sts[1].Get(ctx, "@acme/tools/lint/versions.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Versions []string }
	if err := json.NewDecoder(rc).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	got := slices.Clone(doc.Versions)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("versions.json lists %q, want all of %q (an update was lost)", doc.Versions, want)
	}
}

// TestReplicasTakeOverDeadClaim: a publisher died while writing 1.0.0 and
// left its claim and a file. Replicas retrying at once, all knowing its
// process is dead, give exactly one success, with the winner's files only;
// a replica's recovery of a gone publish that had committed lists it.
func TestReplicasTakeOverDeadClaim(t *testing.T) {
	t.Parallel()
	s3test.Config(t)
	sts := replicas(t, 4)
	ctx := t.Context()
	const dead = "0123456789abcdef0123456789abcdef"
	claim := fmt.Sprintf(`{"id":"crashed","owner":%q,"started":%q,"heartbeat":%q}`, dead,
		time.Now().UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano))
	for k, v := range map[string]string{
		".publish/@acme/features/ui-kit/1.0.0.lock":      claim,
		"@acme/features/ui-kit/1.0.0/templates/half.tsx": "half",
		".publish/@acme/features/ui-kit/2.0.0.lock":      claim,
		"@acme/features/ui-kit/2.0.0/registry.json":      `{"name":"ui-kit","version":"2.0.0"}`,
	} {
		if err := sts[0].Put(ctx, k, strings.NewReader(v), -1); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(owner string) publish.Liveness {
		if owner == dead {
			return publish.LivenessDead
		}
		return publish.LivenessUnknown
	}
	var wg sync.WaitGroup
	errs := make([]error, len(sts))
	start := make(chan struct{})
	for i, st := range sts {
		wg.Go(func() {
			pub := publish.New(st, publish.WithOwner(fmt.Sprintf("%032x", i+1), gone))
			v := publish.Version{
				Namespace: "@acme", Segments: []string{"features", "ui-kit"}, Version: "1.0.0",
				Manifest: []byte(fmt.Sprintf(`{"name":"ui-kit","version":"1.0.0","description":"replica %d"}`, i)),
			}
			<-start
			errs[i] = pub.Publish(ctx, v, func(put publish.PutFunc) error {
				body := fmt.Sprintf("replica %d", i)
				return put(ctx, "templates/button.tsx", int64(len(body)), strings.NewReader(body))
			})
		})
	}
	close(start)
	wg.Wait()
	publishtest.OneWinner(t, errs)
	keys, err := sts[1].List(ctx, "@acme/features/ui-kit/1.0.0/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"@acme/features/ui-kit/1.0.0/.jig-digests.json", "@acme/features/ui-kit/1.0.0/registry.json", "@acme/features/ui-kit/1.0.0/templates/button.tsx"}
	if !slices.Equal(keys, want) {
		t.Errorf("version folder after the takeover = %q, want %q (no debris)", keys, want)
	}
	rec, err := publish.New(sts[2], publish.WithOwner(fmt.Sprintf("%032x", 9), gone)).Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (publish.Recovery{Claims: 1, Listed: 1}); rec != want {
		t.Errorf("Recover = %+v, want %+v", rec, want)
	}
	rc, _, err := sts[3].Get(ctx, "@acme/features/ui-kit/versions.json")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(data), `"2.0.0"`) || !strings.Contains(string(data), `"1.0.0"`) {
		t.Errorf("versions.json = %s, want 1.0.0 and the recovered 2.0.0", data)
	}
	if claims, err := sts[0].List(ctx, ".publish/"); err != nil || len(claims) != 0 {
		t.Errorf("claims left = %q, %v; want none", claims, err)
	}
}
