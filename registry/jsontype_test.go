package registry

import (
	"strings"
	"testing"
)

// A hand-edited jig.json with a value of the wrong type (a conflict block
// range that is not a whole number, a list where an object belongs) is
// refused with the field named in the file's words: it is valid JSON, and
// the error names no Go types.
func TestParseProjectWrongType(t *testing.T) {
	inst := func(conflicts string) string {
		return `{"name": "a", "installed": {"@a/b": {"version": "1.0.0", "conflicts": ` + conflicts + `}}}`
	}
	for doc, want := range map[string]string{
		inst(`[{"target": "x", "blocks": [{"start": -5, "end": 1e400}]}]`): `jig.json: "installed.conflicts.blocks.end" holds the number 1e400 where a whole number is expected`,
		inst(`[{"target": "x", "blocks": [{"start": "1", "end": 2}]}]`):    `jig.json: "installed.conflicts.blocks.start" holds a string where a whole number is expected`,
		inst(`[{"target": "x", "blocks": 3}]`):                             `jig.json: "installed.conflicts.blocks" holds a number where a list is expected`,
		inst(`7`):                                                          `jig.json: "installed.conflicts" holds a number where a list is expected`,
		`{"name": "a", "items": "x"}`:                                      `jig.json: "items" holds a string where a list is expected`,
		`{"name": 5}`:                                                      `jig.json: "name" holds a number where a string is expected`,
		`[]`:                                                               `jig.json holds an array where an object is expected`,
	} {
		_, err := ParseProject([]byte(doc))
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", doc, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "not valid JSON")) {
			t.Errorf("%s: %v", doc, err)
		}
	}
	// Bogus ranges of the right type are only records: read as they are.
	if _, err := ParseProject([]byte(inst(`[{"target": "x", "blocks": [{"start": -5, "end": 99999999}, {"start": 3, "end": 1}]}]`))); err != nil {
		t.Errorf("bogus but well-typed ranges: %v", err)
	}
}
