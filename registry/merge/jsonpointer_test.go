package merge

import (
	"errors"
	"strings"
	"testing"
)

func TestJSONSetDelete(t *testing.T) {
	t.Parallel()
	doc := []byte("{\n    \"a\": {\n        \"list\": [1, 2]\n    },\n    \"b\": true\n}\n")
	for _, tc := range []struct {
		name   string
		set    bool
		tokens []string
		value  string
		want   string
		absent bool
	}{
		{"append with -", true, []string{"a", "list", "-"}, "3", `"list": [
            1,
            2,
            3
        ]`, false},
		{"replace an element", true, []string{"a", "list", "0"}, `"x"`, `"x",`, false},
		{"append at the length", true, []string{"a", "list", "2"}, "9", "9\n", false},
		{"past the end", true, []string{"a", "list", "5"}, "9", "", true},
		{"leading zero", true, []string{"a", "list", "01"}, "9", "", true},
		{"new member", true, []string{"a", "c"}, `{"d":1}`, `"c": {`, false},
		{"missing parent", true, []string{"z", "c"}, "1", "", true},
		{"through a scalar", true, []string{"b", "c"}, "1", "", true},
		{"delete a member", false, []string{"b"}, "", "", false},
		{"delete an element", false, []string{"a", "list", "0"}, "", `"list": [
            2
        ]`, false},
		{"delete -", false, []string{"a", "list", "-"}, "", "", true},
		{"delete absent", false, []string{"q"}, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out []byte
			var err error
			if tc.set {
				out, err = JSONSet("f.json", doc, tc.tokens, []byte(tc.value))
			} else {
				out, err = JSONDelete("f.json", doc, tc.tokens)
			}
			if tc.absent {
				if !errors.Is(err, ErrAbsent) {
					t.Fatalf("got %s, %v; want ErrAbsent", out, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tc.want) || !strings.HasPrefix(string(out), "{\n    \"a\"") {
				t.Errorf("got\n%s\nwant it to hold %q, indented by 4", out, tc.want)
			}
		})
	}
}

func TestJSONSetBounded(t *testing.T) {
	t.Parallel()
	big := make([]byte, MaxEditedJSON+1)
	if _, err := JSONSet("big.json", big, []string{"a"}, []byte("1")); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a file over the limit: got %v", err)
	}
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	if _, err := JSONSet("deep.json", []byte(deep), []string{"0"}, []byte("1")); err == nil {
		t.Error("a deeply nested file was edited")
	}
}

func TestPackageJSONSteps(t *testing.T) {
	t.Parallel()
	pkg := []byte(`{"name":"a","scripts":{"build":"tsc","lint":"eslint .","test":"vitest"},"devDependencies":{"eslint":"^9"}}`)
	out, err := RenameScript(pkg, "lint", "lint:js")
	if err != nil || !strings.Contains(string(out), "\"build\": \"tsc\",\n    \"lint:js\": \"eslint .\",\n    \"test\"") {
		t.Errorf("rename: got %s, %v; want lint:js in lint's place", out, err)
	}
	if _, err := RenameScript(pkg, "lint", "test"); err == nil || errors.Is(err, ErrAbsent) {
		t.Errorf("rename onto an existing script: got %v, want a refusal", err)
	}
	if _, err := RenameScript(pkg, "nope", "x"); !errors.Is(err, ErrAbsent) {
		t.Errorf("rename of a missing script: got %v", err)
	}
	out, err = RemoveDependency(pkg, "eslint")
	if err != nil || strings.Contains(string(out), "eslint\":") {
		t.Errorf("remove: got %s, %v", out, err)
	}
	if _, err := RemoveDependency(pkg, "nope"); !errors.Is(err, ErrAbsent) {
		t.Errorf("remove of a missing dependency: got %v", err)
	}
}
