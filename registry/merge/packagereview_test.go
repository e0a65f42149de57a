package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReviewPackageJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		before, after string
		keep          bool
		want          string
		scripts       []ScriptChange
		fields        []FieldChange
		conflicts     []Conflict
	}{
		{
			name:    "new file",
			after:   `{"name": "a", "type": "module", "scripts": {"t": "x"}}`,
			want:    `{"name": "a", "type": "module", "scripts": {"t": "x"}}`,
			scripts: []ScriptChange{{Name: "t", Command: "x", Action: "added"}},
			fields:  []FieldChange{{Name: "name", Value: `"a"`, Action: "added"}, {Name: "type", Value: `"module"`, Action: "added"}},
		},
		{
			name:      "kept",
			before:    "{\n  \"scripts\": {\n    \"test\": \"echo hi\"\n  }\n}\n",
			after:     "{\n  \"scripts\": {\n    \"test\": \"vitest run\",\n    \"cov\": \"c\"\n  },\n  \"type\": \"module\"\n}\n",
			keep:      true,
			want:      "{\n  \"scripts\": {\n    \"test\": \"echo hi\",\n    \"cov\": \"c\"\n  },\n  \"type\": \"module\"\n}\n",
			scripts:   []ScriptChange{{Name: "cov", Command: "c", Action: "added"}},
			fields:    []FieldChange{{Name: "type", Value: `"module"`, Action: "added"}},
			conflicts: []Conflict{{Path: "scripts.test", Pointer: "/scripts/test", Ours: "echo hi", Theirs: "vitest run"}},
		},
		{
			name:    "forced",
			before:  `{"scripts": {"test": "echo hi"}, "type": "commonjs", "private": true}`,
			after:   `{"scripts": {"test": "vitest run"}, "type": "module"}`,
			want:    `{"scripts": {"test": "vitest run"}, "type": "module"}`,
			scripts: []ScriptChange{{Name: "test", Command: "vitest run", Previous: "echo hi", Action: "changed"}},
			fields: []FieldChange{{Name: "type", Value: `"module"`, Previous: `"commonjs"`, Action: "changed"},
				{Name: "private", Previous: "true", Action: "removed"}},
		},
		{
			name:      "kept when the scripts object went away",
			before:    `{"scripts": {"test": "echo hi"}}`,
			after:     `{"name": "a"}`,
			keep:      true,
			want:      "{\n  \"name\": \"a\",\n  \"scripts\": {\n    \"test\": \"echo hi\"\n  }\n}\n",
			fields:    []FieldChange{{Name: "name", Value: `"a"`, Action: "added"}},
			conflicts: []Conflict{{Path: "scripts.test", Pointer: "/scripts/test", Ours: "echo hi"}},
		},
		{
			name:   "nothing changed",
			before: `{"scripts": {"test": "x"}}`,
			after:  `{"scripts": {"test": "x"}}`,
			keep:   true,
			want:   `{"scripts": {"test": "x"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ReviewPackageJSON([]byte(tc.before), []byte(tc.after), tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Content) != tc.want {
				t.Errorf("content: got %s, want %s", got.Content, tc.want)
			}
			if diff := cmp.Diff(tc.scripts, got.Scripts); diff != "" {
				t.Errorf("scripts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.fields, got.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conflicts, got.Conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReviewPackageJSON(nil, []byte(`{"a": 1,}`), true); err == nil {
		t.Error("a package.json that is not strict JSON: got no error")
	}
}
