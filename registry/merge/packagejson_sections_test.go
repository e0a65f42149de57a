package merge

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// A package.json whose scripts or dependency section is not an object
// (npm cannot read it either) is refused with the section named, by each
// of the three ways jig changes package.json, instead of being replaced by
// an object and losing the user's value.
func TestPackageJSONSectionNotAnObject(t *testing.T) {
	for _, tc := range []struct{ section, value, kind string }{
		{"scripts", `"echo hi"`, "a string"},
		{"scripts", `["build"]`, "an array"},
		{"dependencies", `"left-pad"`, "a string"},
		{"devDependencies", `42`, "a number"},
		{"devDependencies", `true`, "a boolean"},
	} {
		t.Run(tc.section+"="+tc.value, func(t *testing.T) {
			doc := []byte(`{"name": "app", "` + tc.section + `": ` + tc.value + `}`)
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrPackageJSON) {
					t.Fatalf("%s: err = %v, want ErrPackageJSON", what, err)
				}
				if want := `"` + tc.section + `" is ` + tc.kind; !strings.Contains(err.Error(), want) {
					t.Fatalf("%s: err = %v, want it to say %s", what, err, want)
				}
			}
			check("CheckPackageJSON", CheckPackageJSON(doc))
			_, _, err := UpdatePackageJSON(doc, true, PackageUpdate{Scripts: []Script{{Name: "build", Command: "tsc"}}, DevDependencies: map[string]string{"typescript": "^5.0.0"}})
			check("UpdatePackageJSON", err)
			_, err = Merge3PackageJSON(doc, registry.PackageFragment{}, registry.PackageFragment{Scripts: map[string]string{"build": "tsc"}, DevDependencies: map[string]string{"typescript": "^5.0.0"}}, registry.PackageFragment{})
			check("Merge3PackageJSON", err)
		})
	}
	// null is no value to lose: it is read as an empty section.
	out, _, err := UpdatePackageJSON([]byte(`{"name": "app", "scripts": null}`), true, PackageUpdate{Scripts: []Script{{Name: "build", Command: "tsc"}}})
	if err != nil || !strings.Contains(string(out), `"build": "tsc"`) {
		t.Fatalf("scripts null: %s, %v", out, err)
	}
}
