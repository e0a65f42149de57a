package search_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/search"
)

func docs(entries ...search.Entry) []search.Doc {
	out := make([]search.Doc, len(entries))
	for i, e := range entries {
		out[i] = search.Prepare(e)
	}
	return out
}

var catalog = docs(
	search.Entry{Namespace: "@main", Path: "quality/eslint", Name: "eslint", Version: "1.0.0", Type: "registry:quality", Description: "ESLint flat config", Tags: []string{"lint"}},
	search.Entry{Namespace: "@main", Path: "quality/eslint-react", Name: "eslint-react", Version: "1.0.0", Type: "registry:quality", Description: "React rules for ESLint"},
	search.Entry{Namespace: "@main", Path: "quality/prettier", Name: "prettier", Version: "2.0.0", Type: "registry:quality", Description: "Code formatter", Tags: []string{"format", "Lint"}},
	search.Entry{Namespace: "@main", Path: "testing/vitest", Name: "vitest", Version: "1.0.0", Type: "registry:testing", Description: "Unit tests with Vitest"},
	search.Entry{Namespace: "@team", Path: "eslint", Name: "eslint", Version: "0.1.0", Type: "registry:quality", Description: "Team lint rules"},
)

func ids(p search.Page) []string {
	var out []string
	for _, h := range p.Results {
		out = append(out, h.ID()+" "+string(h.Match))
	}
	return out
}

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    search.Query
		want []string
	}{
		{"exact before prefix before word", search.Query{Text: "eslint"}, []string{
			"@main/quality/eslint exact", "@team/eslint exact", "@main/quality/eslint-react prefix",
		}},
		{"case-insensitive", search.Query{Text: "ESLint"}, []string{
			"@main/quality/eslint exact", "@team/eslint exact", "@main/quality/eslint-react prefix",
		}},
		{"path prefix", search.Query{Text: "quality/"}, []string{
			"@main/quality/eslint prefix", "@main/quality/eslint-react prefix", "@main/quality/prettier prefix",
			"@team/eslint tag", // its type is registry:quality
		}},
		{"full identifier", search.Query{Text: "@team/eslint"}, []string{"@team/eslint exact"}},
		{"word in description", search.Query{Text: "formatter"}, []string{"@main/quality/prettier word"}},
		{"word prefix in description", search.Query{Text: "react rul"}, []string{"@main/quality/eslint-react word"}},
		// a tag match ranks above a description match ("Team lint rules")
		{"tag word before description word", search.Query{Text: "lint"}, []string{
			"@main/quality/eslint tag", "@main/quality/prettier tag", "@team/eslint word",
		}},
		{"all words must match", search.Query{Text: "unit formatter"}, nil},
		{"namespace filter", search.Query{Text: "eslint", Namespace: "@team"}, []string{"@team/eslint exact"}},
		{"type filter short", search.Query{Type: "testing"}, []string{"@main/testing/vitest all"}},
		{"type filter full", search.Query{Type: "registry:testing"}, []string{"@main/testing/vitest all"}},
		{"tag filter", search.Query{Tag: "lint"}, []string{"@main/quality/eslint all", "@main/quality/prettier all"}},
		{"empty text lists all", search.Query{Limit: 2}, []string{"@main/quality/eslint all", "@main/quality/eslint-react all"}},
		{"no match", search.Query{Text: "rollup"}, nil},
		{"punctuation only", search.Query{Text: "--"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := search.Run(tt.q, catalog)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(p)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunPages(t *testing.T) {
	t.Parallel()
	for _, q := range []search.Query{{}, {Text: "eslint"}, {Text: "lint"}, {Text: "e"}} {
		all, err := search.Run(search.Query{Text: q.Text, Limit: search.MaxLimit}, catalog)
		if err != nil {
			t.Fatal(err)
		}
		for limit := 1; limit <= 3; limit++ {
			var got []string
			q := search.Query{Text: q.Text, Limit: limit}
			for pages := 0; ; pages++ {
				if pages > len(catalog) {
					t.Fatalf("%q limit %d: cursor loops", q.Text, limit)
				}
				p, err := search.Run(q, catalog)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Results) > limit {
					t.Fatalf("got %d results, want at most %d", len(p.Results), limit)
				}
				got = append(got, ids(p)...)
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
			}
			if diff := cmp.Diff(ids(all), got); diff != "" {
				t.Errorf("%q limit %d: pages differ from one page (-want +got):\n%s", q.Text, limit, diff)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    search.Query
		want error
	}{
		{"zero", search.Query{}, nil},
		{"longest text", search.Query{Text: strings.Repeat("a", search.MaxTextLen)}, nil},
		{"text too long", search.Query{Text: strings.Repeat("a", search.MaxTextLen+1)}, search.ErrQueryTooLong},
		{"tag too long", search.Query{Tag: strings.Repeat("a", search.MaxFilterLen+1)}, search.ErrQueryTooLong},
		{"bad namespace", search.Query{Namespace: "main"}, search.ErrInvalidQuery},
		{"upper namespace ok", search.Query{Namespace: "@Main"}, nil},
		{"limit too big", search.Query{Limit: search.MaxLimit + 1}, search.ErrInvalidQuery},
		{"negative limit", search.Query{Limit: -1}, search.ErrInvalidQuery},
		{"bad cursor", search.Query{Cursor: "!!"}, search.ErrInvalidQuery},
		{"forged cursor", search.Query{Cursor: "OXg"}, search.ErrInvalidQuery},
		{"invalid utf-8", search.Query{Text: "\xff"}, search.ErrInvalidQuery},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.q.Validate()
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"": 0, "1": 1, "100": 100} {
		if got, err := search.ParseLimit(in); err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "101", "-1", "x", "1e3"} {
		if _, err := search.ParseLimit(in); !errors.Is(err, search.ErrInvalidQuery) {
			t.Errorf("ParseLimit(%q): got %v, want ErrInvalidQuery", in, err)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	a := []search.Hit{{Entry: search.Entry{Namespace: "@main", Path: "b"}, Match: search.MatchPrefix}}
	b := []search.Hit{
		{Entry: search.Entry{Namespace: "@main", Path: "b"}, Match: search.MatchWord},
		{Entry: search.Entry{Namespace: "@x", Path: "a"}, Match: search.MatchExact},
		{Entry: search.Entry{Namespace: "@a", Path: "z"}, Match: search.MatchWord},
	}
	got := ids(search.Page{Results: search.Merge(0, a, b)})
	want := []string{"@x/a exact", "@main/b prefix", "@a/z word"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := search.Merge(1, a, b); len(got) != 1 {
		t.Errorf("limit 1: got %d hits", len(got))
	}
}

// FuzzCursor checks that any cursor either is rejected or pages through a
// subset of the full result list in order, never repeating an earlier hit.
func FuzzCursor(f *testing.F) {
	f.Add("")
	f.Add("MTpAbWFpbi9xdWFsaXR5L2VzbGludA")
	f.Add("MzpAbWFpbi9x")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, cursor string) {
		q := search.Query{Text: "e", Cursor: cursor}
		p, err := search.Run(q, catalog)
		if err != nil {
			if !errors.Is(err, search.ErrInvalidQuery) && !errors.Is(err, search.ErrQueryTooLong) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		all, _ := search.Run(search.Query{Text: "e", Limit: search.MaxLimit}, catalog)
		full := ids(all)
		got := ids(p)
		// got must be a contiguous tail-part of full.
		if len(got) == 0 {
			return
		}
		start := -1
		for i, s := range full {
			if s == got[0] {
				start = i
			}
		}
		if start < 0 || start+len(got) > len(full) {
			t.Fatalf("cursor %q: page %v is not part of %v", cursor, got, full)
		}
		if diff := cmp.Diff(full[start:start+len(got)], got); diff != "" {
			t.Fatalf("cursor %q: page out of order (-want +got):\n%s", cursor, diff)
		}
	})
}
