package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/registry"
)

// A jig.json that another jig writes while jig adopt fetches the
// registries is never overwritten: adopt writes under the project lock
// and looks again there.
func TestAdoptKeepsAConcurrentProjectFile(t *testing.T) {
	if !flock.Supported {
		t.Skip("no flock on this system")
	}
	dir := t.TempDir()
	rack := `{"name": "app", "language": "ts", "items": ["@main/runtimes/node@1.2.0", "@main/build/ts@1.0.0"]}`
	if err := os.WriteFile(filepath.Join(dir, registry.ReferenceProjectFile), []byte(rack), 0o644); err != nil {
		t.Fatal(err)
	}
	// The other jig holds the project lock.
	lock, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if ok, err := flock.TryLock(lock); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	started := make(chan struct{}, 1)
	eng, err := New(fixture(), WithProgress(func(Event) {
		select {
		case started <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := eng.Adopt(context.Background(), dir, false)
		done <- err
	}()
	// Adopt is past its first look for jig.json once it downloads files.
	<-started
	theirs := []byte(`{"name": "theirs"}` + "\n")
	if err := os.WriteFile(filepath.Join(dir, registry.ProjectFile), theirs, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := flock.Unlock(lock); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, ErrAdopt) {
		t.Fatalf("Adopt = %v, want ErrAdopt (jig.json already there)", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, registry.ProjectFile))
	if string(got) != string(theirs) {
		t.Fatalf("jig.json = %q, want the other jig's %q", got, theirs)
	}
}

// A rack.json field of the wrong type is named in the error, in the
// file's words (no Go types).
func TestAdoptWrongFieldType(t *testing.T) {
	for rack, want := range map[string]string{
		`{"name": "a", "items": "x"}`:         `rack.json: "items" holds a string where a list is expected`,
		`{"name": "a", "items": [1]}`:         `rack.json: "items" holds a number where a string is expected`,
		`{"name": 7}`:                         `rack.json: "name" holds a number where a string is expected`,
		`{"name": "a", "template": {"x": 1}}`: `rack.json: "template" holds an object where a string is expected`,
		`["a"]`:                               `rack.json holds an array where an object is expected`,
		`{"name": "a", "language": ["ts"]}`:   `rack.json: "language" holds an array where a string is expected`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, registry.ReferenceProjectFile), []byte(rack), 0o644); err != nil {
			t.Fatal(err)
		}
		eng, err := New(fixture())
		if err != nil {
			t.Fatal(err)
		}
		_, err = eng.Adopt(context.Background(), dir, true)
		if !errors.Is(err, ErrAdopt) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: Adopt = %v, want ErrAdopt ending in %q", rack, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "rackProject")) {
			t.Errorf("%s: the error names Go types: %v", rack, err)
		}
	}
}
