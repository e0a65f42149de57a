package s3_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver/internal/publish"
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
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("replicas %d and %d both published 1.0.0, want exactly one", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, publish.ErrVersionExists):
			t.Errorf("replica %d: %v, want nil or ErrVersionExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no replica published, want exactly one")
	}
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
