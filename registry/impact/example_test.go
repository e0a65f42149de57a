package impact_test

import (
	"fmt"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
)

func ExampleCompare() {
	old := impact.Release{
		Manifest: &registry.Manifest{Name: "eslint", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.0",
			Files: []registry.File{{Target: ".eslintrc.json", Type: registry.FileConfig, Path: "templates/eslintrc.json"}}},
		Files: map[string][]byte{"templates/eslintrc.json": []byte(`{"root": true}`)},
	}
	next := impact.Release{
		Manifest: &registry.Manifest{Name: "eslint", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.1",
			Files: []registry.File{{Target: "eslint.config.json", Type: registry.FileConfig, Path: "templates/eslint.config.json"}}},
		Files: map[string][]byte{"templates/eslint.config.json": []byte(`{"root": true}`)},
	}
	rep := impact.Compare(old, next)
	fmt.Println(rep.Level)
	for _, c := range rep.Changes {
		fmt.Println(c.Level, c)
	}
	fmt.Println(rep.Check())
	// Output:
	// major
	// major removes file .eslintrc.json (templates/eslintrc.json)
	// minor adds file eslint.config.json
	// 1.0.1 removes file .eslintrc.json (templates/eslintrc.json) (major change); adds file eslint.config.json (minor change): publish it as 2.0.0; or, if .eslintrc.json was renamed to eslint.config.json, declare the rename (a minor change) in registry.json's "migrations": {"version": "1.1.0", "steps": [{"type": "rename", "from": ".eslintrc.json", "to": "eslint.config.json"}]} and publish it as 1.1.0
}
