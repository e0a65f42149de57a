package apply

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// userLine is the line the fuzzed user adds; no registry version holds it.
const userLine = "USER-EDIT-7f3a"

// FuzzUpdateKeepsEdits checks what the lifecycle promises about an edit:
// a line the user adds to a registry's file is in the file after an update
// to 1.1.0, after a second update to 1.2.0 (unless it is refused because
// the first one's conflict is unresolved) and after remove, whatever the
// three versions of the file hold and wherever the line goes. The file's
// conflict lines also stay recognisable to check. It runs for a file of
// each line-based strategy: overwrite (a.txt), ignore (.gitignore) and env
// (.env.example, where the line is a variable of the user's).
func FuzzUpdateKeepsEdits(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nB\nC\n", uint8(1))
	f.Add("a\nb\nc\n", "a\nb\nc\nd\n", "a\nb\n", uint8(3))
	f.Add("x\n", "y\n", "z\n", uint8(0))
	f.Add("", "a\n", "", uint8(0))
	f.Add("a\r\nb\r\n", "a\r\nc\r\n", "d\r\n", uint8(1))
	f.Add("same\n", "same\n", "same\n", uint8(9))
	f.Fuzz(func(t *testing.T, v1, v2, v3 string, at uint8) {
		for _, v := range []string{v1, v2, v3} {
			if len(v) > 2048 || strings.Contains(strings.ToUpper(v), "USER") || strings.ContainsRune(v, 0) {
				t.Skip()
			}
		}
		for _, target := range []struct{ name, line string }{
			{"a.txt", userLine},
			{".gitignore", userLine},
			{".env.example", "USER_EDIT_7F3A=mine"},
		} {
			keepsEdit(t, target.name, target.line, v1, v2, v3, at)
		}
	})
}

// keepsEdit is one run of FuzzUpdateKeepsEdits: the registry's file
// target holds v1, v2 and v3 in its three versions; the user inserts
// userLine before the line at (modulo the lines there are).
func keepsEdit(t *testing.T, target, userLine, v1, v2, v3 string, at uint8) {
	t.Helper()
	e := newEngine(t, threeVersions(target, v1, v2, v3))
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/f@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, target)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	i := int(at) % (len(lines) + 1)
	edited := strings.Join(lines[:i], "") + userLine + "\n" + strings.Join(lines[i:], "")
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	kept := func(step string) {
		t.Helper()
		if b := readAfter(t, p, step); !strings.Contains(string(b), userLine) {
			t.Fatalf("%s: after %s the user's line is gone:\n%s", target, step, b)
		}
	}
	for _, to := range []string{"1.1.0", "1.2.0"} {
		plan, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir, To: to, Registries: []string{"@team/f"}})
		if errors.Is(err, ErrUnresolved) {
			cur, _ := os.ReadFile(p)
			if len(openBlocks(cur, "")) == 0 {
				t.Fatalf("update to %s refused as unresolved without markers:\n%s", to, cur)
			}
			continue
		}
		if err != nil {
			t.Fatalf("update to %s: %v", to, err)
		}
		if err := e.Apply(t.Context(), plan); err != nil {
			t.Fatalf("update to %s: %v", to, err)
		}
		kept("the update to " + to)
		cur, _ := os.ReadFile(p)
		if plan.Conflicts > 0 && len(markedConflicts(cur, "@team/f@"+to)) != plan.Conflicts {
			t.Fatalf("update to %s: %d conflicts, %d found in the file:\n%s", to, plan.Conflicts, len(markedConflicts(cur, "@team/f@"+to)), cur)
		}
	}
	runRemove(t, e, dir, "@team/f")
	kept("remove")
}

// FuzzUpdateKeepsJSONKeys is FuzzUpdateKeepsEdits for tsconfig.json (the
// json merge strategy): a top-level key the user adds stays, with its
// value, through two updates and remove, whatever JSON objects the three
// versions hold.
func FuzzUpdateKeepsJSONKeys(f *testing.F) {
	f.Add(`{"a": 1}`, `{"a": 2}`, `{"b": [1, 2]}`)
	f.Add(`{"compilerOptions": {"target": "ES2020"}}`, `{"compilerOptions": {"target": "ES2022"}, "include": ["src"]}`, `{}`)
	f.Add(`{"x": {"y": {"z": null}}}`, `{"x": "flat"}`, `{"x": {"y": 1}}`)
	f.Add(`{}`, `{}`, `{}`)
	f.Fuzz(func(t *testing.T, v1, v2, v3 string) {
		for _, v := range []string{v1, v2, v3} {
			var m map[string]any
			if len(v) > 2048 || strings.Contains(v, userLine) || json.Unmarshal([]byte(v), &m) != nil || m == nil {
				t.Skip()
			}
		}
		e := newEngine(t, threeVersions("tsconfig.json", v1, v2, v3))
		dir := filepath.Join(t.TempDir(), "app")
		if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/f@1.0.0", Mode: ModeInit}, false); err != nil {
			t.Skip() // a document the json strategy refuses (too deep, duplicate keys, ...)
		}
		p := filepath.Join(dir, "tsconfig.json")
		var doc map[string]any
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("init wrote invalid JSON: %v\n%s", err, b)
		}
		doc[userLine] = "mine"
		edited, _ := json.MarshalIndent(doc, "", "  ")
		if err := os.WriteFile(p, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		kept := func(step string) {
			t.Helper()
			b := readAfter(t, p, step)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("after %s the file is not JSON: %v\n%s", step, err, b)
			}
			if got[userLine] != "mine" {
				t.Fatalf("after %s the user's key is gone:\n%s", step, b)
			}
		}
		for _, to := range []string{"1.1.0", "1.2.0"} {
			if _, err := runUpdate(t, e, UpdateRequest{Dir: dir, To: to, Registries: []string{"@team/f"}}); err != nil {
				t.Fatalf("update to %s: %v", to, err)
			}
			kept("the update to " + to)
		}
		runRemove(t, e, dir, "@team/f")
		kept("remove")
	})
}

// threeVersions is a source with @team/f 1.0.0, 1.1.0 and 1.2.0, each
// writing one file, target, with v1, v2 and v3.
func threeVersions(target, v1, v2, v3 string) *verSource {
	s := newVerSource()
	for _, v := range []struct{ version, content string }{{"1.0.0", v1}, {"1.1.0", v2}, {"1.2.0", v3}} {
		s.add("@team/f", &registry.Manifest{
			Name: "f", Namespace: "@team", Type: registry.TypeFeature, Version: v.version, Priority: 4,
			Files: []registry.File{{Target: target, Type: registry.FileConfig, Content: &v.content}},
		}, nil)
	}
	return s
}

// readAfter reads the file p after step of a fuzzed lifecycle.
func readAfter(t *testing.T, p, step string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("after %s: %v", step, err)
	}
	return b
}
