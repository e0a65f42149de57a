package search_test

import (
	"fmt"

	"github.com/jigkit/jig/registry/search"
)

func ExampleRun() {
	docs := []search.Doc{
		search.Prepare(search.Entry{Namespace: "@main", Path: "quality/eslint", Name: "eslint", Version: "1.0.0", Type: "registry:quality", Description: "ESLint flat config"}),
		search.Prepare(search.Entry{Namespace: "@main", Path: "quality/eslint-react", Name: "eslint-react", Version: "1.0.0", Type: "registry:quality"}),
		search.Prepare(search.Entry{Namespace: "@main", Path: "quality/prettier", Name: "prettier", Version: "1.0.0", Type: "registry:quality", Description: "Formatter that plays well with ESLint"}),
	}
	page, err := search.Run(search.Query{Text: "eslint", Limit: 2}, docs)
	if err != nil {
		panic(err)
	}
	for _, h := range page.Results {
		fmt.Println(h.Match, h.ID(), h.Version)
	}
	next, _ := search.Run(search.Query{Text: "eslint", Limit: 2, Cursor: page.Next}, docs)
	for _, h := range next.Results {
		fmt.Println(h.Match, h.ID(), h.Version)
	}
	// Output:
	// exact @main/quality/eslint 1.0.0
	// prefix @main/quality/eslint-react 1.0.0
	// word @main/quality/prettier 1.0.0
}

func ExampleRunSets() {
	main := search.NewSet([]search.Doc{
		search.Prepare(search.Entry{Namespace: "@main", Path: "quality/eslint", Name: "eslint", Version: "1.0.0", Type: "registry:quality", Description: "ESLint flat config"}),
		search.Prepare(search.Entry{Namespace: "@main", Path: "quality/prettier", Name: "prettier", Version: "1.0.0", Type: "registry:quality", Description: "Formatter that plays well with ESLint"}),
	})
	team := search.NewSet([]search.Doc{
		search.Prepare(search.Entry{Namespace: "@team", Path: "eslint", Name: "eslint", Version: "0.1.0", Type: "registry:quality"}),
	})
	// A publish replaces one registry's doc in a new set.
	team = team.With(search.Prepare(search.Entry{Namespace: "@team", Path: "eslint", Name: "eslint", Version: "0.2.0", Type: "registry:quality"}))
	page, err := search.RunSets(search.Query{Text: "eslint"}, []*search.Set{main, team})
	if err != nil {
		panic(err)
	}
	for _, h := range page.Results {
		fmt.Println(h.Match, h.ID(), h.Version)
	}
	// Output:
	// exact @main/quality/eslint 1.0.0
	// exact @team/eslint 0.2.0
	// word @main/quality/prettier 1.0.0
}
