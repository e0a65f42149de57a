package merge_test

import (
	"fmt"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

func ExampleMerge() {
	current := []byte("{\n  // the project's own settings\n  \"compilerOptions\": {\"strict\": true, \"lib\": [\"ES2022\"]},\n}\n")
	incoming := []byte(`{"compilerOptions": {"lib": ["ES2022", "DOM"], "outDir": "dist"}}`)
	strategy := merge.StrategyFor("tsconfig.json", nil)
	out, err := merge.Merge(strategy, current, true, incoming)
	if err != nil {
		panic(err)
	}
	fmt.Print(strategy, "\n", string(out))
	// Output:
	// json
	// {
	//   "compilerOptions": {
	//     "strict": true,
	//     "lib": [
	//       "ES2022",
	//       "DOM"
	//     ],
	//     "outDir": "dist"
	//   }
	// }
}

func ExampleMerge_ignore() {
	out, _ := merge.Merge(merge.StrategyFor(".gitignore", nil), []byte("node_modules\n"), true, []byte("node_modules\ndist\n"))
	fmt.Print(string(out))
	// Output:
	// node_modules
	// dist
}

func ExampleCombineRanges() {
	rng, _, conflict := registry.CombineRanges(
		registry.RangeRequest{Range: "^5.0.0", Priority: 6, From: "@main/quality/eslint"},
		registry.RangeRequest{Range: "^5.4.0", Priority: 3, From: "@main/build/typescript"},
	)
	fmt.Println(rng, conflict)
	rng, winner, conflict := registry.CombineRanges(
		registry.RangeRequest{Range: "^8.0.0", Priority: 6, From: "@main/quality/eslint"},
		registry.RangeRequest{Range: "^9.0.0", Priority: 2, From: "@main/build/typescript"},
	)
	fmt.Println(rng, winner.From, conflict)
	// Output:
	// ^5.4.0 false
	// ^9.0.0 @main/build/typescript true
}

func ExampleUpdatePackageJSON() {
	current := []byte("{\n  \"name\": \"demo\",\n  \"devDependencies\": {\n    \"zod\": \"^3.0.0\"\n  }\n}\n")
	out, changes, err := merge.UpdatePackageJSON(current, true, merge.PackageUpdate{
		Dependencies:    map[string]string{"zod": "^3.22.0"},
		DevDependencies: map[string]string{"vitest": "^2.0.0"},
		Scripts:         []merge.Script{{Name: "test", Command: "vitest run"}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	for _, c := range changes {
		fmt.Println(c.Action, c.Name, c.Range)
	}
	// Output:
	// {
	//   "name": "demo",
	//   "devDependencies": {
	//     "vitest": "^2.0.0"
	//   },
	//   "version": "1.0.0",
	//   "dependencies": {
	//     "zod": "^3.22.0"
	//   },
	//   "scripts": {
	//     "test": "vitest run"
	//   }
	// }
	// added vitest ^2.0.0
	// changed zod ^3.22.0
}

func ExampleParseRange() {
	r, err := registry.ParseRange(">=18.17.0 <19 || ^20.3")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range []string{"18.17.1", "19.0.0", "20.11.1", "21.0.0", "20.12.0-rc.1"} {
		fmt.Println(v, r.Allows(v))
	}
	_, err = registry.ParseRange("^1.0.0 || latest")
	fmt.Println(err)
	// Output:
	// 18.17.1 true
	// 19.0.0 false
	// 20.11.1 true
	// 21.0.0 false
	// 20.12.0-rc.1 false
	// "latest" is not a version range comparator (e.g. ^1.2.0, >=2, 1.x)
}
