// Package search is jig's registry search: the matching, ranking and
// paging rules that the server's GET /search applies to its index and that
// the client applies itself to a server without that route.
//
// An [Entry] is what search sees of a registry (its latest version's name,
// path, type, description and tags). [Prepare] turns it into a [Doc] once;
// [Run] answers a [Query] over docs with one [Page]: hits ordered by
// [Match] (exact name, then prefix, then word match, then everything for
// an empty text), ties broken by identifier, and an opaque cursor for the
// next page. The caller decides which entries a searcher may see before
// calling Run: search itself knows nothing of access.
//
//	docs := []search.Doc{search.Prepare(entry)}
//	page, err := search.Run(search.Query{Text: "eslint"}, docs)
//
// Run matches every doc. A server that answers many queries over one
// catalog keeps a [Set] per namespace instead, built once with [NewSet] and
// updated with [Set.With] and [Set.Without] on each publish, and answers
// with [RunSets]: the same pages, at a cost that follows the matches
// rather than the catalog's size.
//
//	sets := []*search.Set{search.NewSet(docs)}
//	page, err := search.RunSets(search.Query{Text: "eslint"}, sets)
package search
