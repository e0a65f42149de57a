package merge_test

import (
	"fmt"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// A registry's new version changes one line while the project changed
// another: both changes land, without markers. (Changes to adjacent lines
// conflict, as in git.)
func ExampleMerge3() {
	base := []byte("port = 3000\n\nhost = localhost\n")
	ours := []byte("port = 8080\n\nhost = localhost\n")
	theirs := []byte("port = 3000\n\nhost = 0.0.0.0\n")
	res, err := merge.Merge3(registry.StrategyOverwrite, base, ours, theirs, "@team/x@1.1.0")
	if err != nil {
		panic(err)
	}
	fmt.Print(string(res.Content))
	fmt.Println("conflicts:", len(res.Conflicts))
	// Output:
	// port = 8080
	//
	// host = 0.0.0.0
	// conflicts: 0
}

// Both sides changed the same line: git's conflict markers, labelled with
// the registry version.
func ExampleMerge3_conflict() {
	base := []byte("port = 3000\n")
	ours := []byte("port = 8080\n")
	theirs := []byte("port = 4000\n")
	res, _ := merge.Merge3(registry.StrategyOverwrite, base, ours, theirs, "@team/x@1.1.0")
	fmt.Print(string(res.Content))
	fmt.Println(res.Conflicts[0].Path)
	// Output:
	// <<<<<<< ours
	// port = 8080
	// ||||||| base
	// port = 3000
	// =======
	// port = 4000
	// >>>>>>> @team/x@1.1.0
	// lines 1-7
}

// JSON merges by key: the registry's change to one key lands, a key both
// sides changed is reported by its path and keeps the project's value.
func ExampleMerge3_json() {
	base := []byte(`{"compilerOptions": {"target": "ES2020", "strict": true}}`)
	ours := []byte(`{"compilerOptions": {"target": "ES2019", "strict": true}}`)
	theirs := []byte(`{"compilerOptions": {"target": "ES2022", "strict": false}}`)
	res, _ := merge.Merge3(registry.StrategyJSON, base, ours, theirs, "@team/x@1.1.0")
	fmt.Print(string(res.Content))
	for _, c := range res.Conflicts {
		fmt.Printf("conflict at %s: ours %s, base %s, theirs %s\n", c.Path, c.Ours, c.Base, c.Theirs)
	}
	// Output:
	// {
	//   "compilerOptions": {
	//     "target": "ES2019",
	//     "strict": false
	//   }
	// }
	// conflict at compilerOptions.target: ours "ES2019", base "ES2020", theirs "ES2022"
}

// Removing a registry is a merge towards nothing: what it added and the
// user left alone goes, what another installed registry declares stays.
func ExampleMerge3PackageJSON() {
	ours := []byte(`{
  "name": "app",
  "version": "1.0.0",
  "devDependencies": {
    "eslint": "^9.0.0",
    "prettier": "^3.0.0"
  },
  "scripts": {
    "format": "prettier -w ."
  }
}
`)
	installed := registry.PackageFragment{
		DevDependencies: map[string]string{"eslint": "^9.0.0", "prettier": "^3.0.0"},
		Scripts:         map[string]string{"format": "prettier -w ."},
	}
	others := registry.PackageFragment{DevDependencies: map[string]string{"eslint": "^9.0.0"}}
	res, _ := merge.Merge3PackageJSON(ours, installed, registry.PackageFragment{}, others)
	fmt.Print(string(res.Content))
	for _, d := range res.Dependencies {
		fmt.Println(d.Action, d.Name)
	}
	// Output:
	// {
	//   "name": "app",
	//   "version": "1.0.0",
	//   "devDependencies": {
	//     "eslint": "^9.0.0"
	//   }
	// }
	// removed prettier
}

func ExampleUnifiedDiff() {
	before := []byte("a\nb\nc\n")
	after := []byte("a\nB\nc\nd\n")
	fmt.Print(merge.UnifiedDiff("notes.txt", before, true, after, true))
	// Output:
	// --- a/notes.txt
	// +++ b/notes.txt
	// @@ -1,3 +1,4 @@
	//  a
	// -b
	// +B
	//  c
	// +d
}

// A migration moved .eslintrc.json to eslint.config.json and the new
// version changed a line: one diff says both, as git does.
func ExampleRenameDiff() {
	before := []byte("{\n  \"root\": true,\n  \"extends\": \"eslint:recommended\"\n}\n")
	after := []byte("{\n  \"root\": true,\n  \"extends\": \"eslint:all\"\n}\n")
	fmt.Print(merge.RenameDiff(".eslintrc.json", "eslint.config.json", before, after))
	fmt.Println("--")
	fmt.Print(merge.RenameDiff("a.txt", "b.txt", []byte("same\n"), []byte("same\n")))
	// Output:
	// diff --git a/.eslintrc.json b/eslint.config.json
	// rename from .eslintrc.json
	// rename to eslint.config.json
	// --- a/.eslintrc.json
	// +++ b/eslint.config.json
	// @@ -1,4 +1,4 @@
	//  {
	//    "root": true,
	// -  "extends": "eslint:recommended"
	// +  "extends": "eslint:all"
	//  }
	// --
	// diff --git a/a.txt b/b.txt
	// rename from a.txt
	// rename to b.txt
}

// A JSON file whose name is not on any list (renovate.json) is merged as
// JSON on update: the project kept its value where both sides changed
// it, and the conflict names the value by path and by JSON Pointer.
func ExampleMerge3_jsonPointer() {
	base := []byte(`{"extends": ["config:base"], "schedule": {"weekly": "monday"}}`)
	ours := []byte(`{"extends": ["config:base"], "schedule": {"weekly": "friday"}}`)
	theirs := []byte(`{"extends": ["config:recommended"], "schedule": {"weekly": "sunday"}}`)
	res, err := merge.Merge3(registry.StrategyOverwrite, base, ours, theirs, "@team/renovate@2.0.0")
	if err != nil {
		panic(err)
	}
	for _, c := range res.Conflicts {
		fmt.Printf("%s (%s): ours %s, theirs %s\n", c.Path, c.Pointer, c.Ours, c.Theirs)
	}
	// Output:
	// schedule.weekly (/schedule/weekly): ours "friday", theirs "sunday"
}

func ExampleJSONPointer() {
	fmt.Println(merge.JSONPointer("compilerOptions", "paths", "@/*"))
	fmt.Println(merge.JSONPointer("exports", "./feature~x"))
	// Output:
	// /compilerOptions/paths/@~1*
	// /exports/.~1feature~0x
}

// A YAML file merged by key: the project changed log_level (with a
// comment), the new version of the registry added port next to it. A line
// merge would see both changes in one place; the key merge sees two keys.
func ExampleWithTarget() {
	base := "log_level: info\nhost: 0.0.0.0\n"
	ours := "log_level: debug # while developing\nhost: 0.0.0.0\n"
	theirs := "log_level: info\nport: 8080\nhost: 0.0.0.0\n"
	res, err := merge.Merge3(registry.StrategyOverwrite, []byte(base), []byte(ours), []byte(theirs), "@main/go-service@1.1.0", merge.WithTarget("config.yaml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Content))
	fmt.Println("conflicts:", len(res.Conflicts))
	// Output:
	// log_level: debug # while developing
	// port: 8080
	// host: 0.0.0.0
	// conflicts: 0
}
