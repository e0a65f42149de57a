package search

import (
	"encoding/base64"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jigkit/jig/registry"
)

// Limits of a [Query].
const (
	// MaxTextLen is the longest query text accepted, in bytes.
	MaxTextLen = 200
	// MaxFilterLen is the longest namespace, type or tag filter accepted.
	MaxFilterLen = 100
	// MaxCursorLen is the longest cursor accepted.
	MaxCursorLen = 400
	// DefaultLimit is the page size when [Query.Limit] is 0.
	DefaultLimit = 20
	// MaxLimit is the largest page size.
	MaxLimit = 100
)

// Errors returned by [Query.Validate]. The server answers them with 400.
var (
	// ErrQueryTooLong: the text or a filter is longer than its limit.
	ErrQueryTooLong = errors.New("query too long")
	// ErrInvalidQuery: a filter, the limit or the cursor is malformed.
	ErrInvalidQuery = errors.New("invalid query")
)

// Match says why an entry matched a query; it orders results.
type Match string

// Matches, best first.
const (
	// MatchExact: the text is the registry's name, path or full identifier.
	MatchExact Match = "exact"
	// MatchPrefix: the name, path or identifier starts with the text.
	MatchPrefix Match = "prefix"
	// MatchTag: every word of the text starts a word of the name, path,
	// tags or type: the entry is about it, beyond mentioning it.
	MatchTag Match = "tag"
	// MatchWord: every word of the text starts a word of the name, path,
	// description, tags or type, and some word only the description's.
	MatchWord Match = "word"
	// MatchAll: the text is empty; every entry passing the filters matches.
	MatchAll Match = "all"
)

// Rank orders matches; a lower rank sorts first, and a match this package
// does not know sorts last.
func (m Match) Rank() int {
	switch m {
	case MatchExact:
		return 0
	case MatchPrefix:
		return 1
	case MatchTag:
		return 2
	case MatchWord:
		return 3
	case MatchAll:
		return 4
	}
	return 5
}

// Entry is what search sees of one registry: its latest version's
// metadata.
type Entry struct {
	Namespace   string   `json:"namespace"`
	Path        string   `json:"path"`
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Type        string   `json:"type"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Variants are the registry's named variants, sorted; nil for none.
	Variants []string `json:"variants,omitempty"`
}

// ID returns the registry's full identifier, "@ns/path".
func (e Entry) ID() string { return e.Namespace + "/" + e.Path }

// EntryOf returns the search entry of a manifest stored at ns/path.
func EntryOf(ns, path string, m *registry.Manifest) Entry {
	return Entry{
		Namespace:   ns,
		Path:        path,
		Name:        m.Name,
		Version:     m.Version,
		Type:        string(m.Type),
		Description: m.Description,
		Tags:        slices.Clone(m.Tags),
		Variants:    firstVariants(m),
	}
}

// firstVariants are m's variant names, at most [registry.MaxVariants]
// (publishing allows no more; a manifest a server stored by other means
// does not make an entry grow past it).
func firstVariants(m *registry.Manifest) []string {
	v := m.VariantNames()
	return v[:min(len(v), registry.MaxVariants)]
}

// Hit is one search result: an entry and why it matched.
type Hit struct {
	Entry
	Match Match `json:"match"`
}

// Page is one page of results: the body of GET /search.
type Page struct {
	Results []Hit `json:"results"`
	// Next is the cursor of the following page, "" on the last page.
	Next string `json:"next,omitempty"`
}

// Query is a search: free text plus filters. The zero Query matches every
// entry.
type Query struct {
	// Text is matched against names, paths, descriptions, tags and types,
	// case-insensitively. "" matches everything.
	Text string
	// Namespace keeps entries of this namespace only ("@main"); "" keeps all.
	Namespace string
	// Type keeps entries of this type ("registry:quality" or "quality");
	// "" keeps all.
	Type string
	// Tag keeps entries carrying this tag (case-insensitive); "" keeps all.
	Tag string
	// Limit is the page size; 0 means [DefaultLimit], at most [MaxLimit].
	Limit int
	// Cursor is [Page.Next] of the previous page; "" starts at the top.
	Cursor string
}

// Validate checks the query's lengths, filters, limit and cursor. The error
// wraps [ErrQueryTooLong] or [ErrInvalidQuery] and says what to change.
func (q Query) Validate() error {
	if len(q.Text) > MaxTextLen {
		return fmt.Errorf("%w: the search text is %d bytes; at most %d are allowed", ErrQueryTooLong, len(q.Text), MaxTextLen)
	}
	if !utf8.ValidString(q.Text) {
		return fmt.Errorf("%w: the search text is not valid UTF-8", ErrInvalidQuery)
	}
	for _, f := range []struct{ name, v string }{{"namespace", q.Namespace}, {"type", q.Type}, {"tag", q.Tag}} {
		if len(f.v) > MaxFilterLen {
			return fmt.Errorf("%w: the %s filter is %d bytes; at most %d are allowed", ErrQueryTooLong, f.name, len(f.v), MaxFilterLen)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: the %s filter is not valid UTF-8", ErrInvalidQuery, f.name)
		}
	}
	if len(q.Cursor) > MaxCursorLen {
		return fmt.Errorf("%w: the cursor is longer than %d bytes", ErrQueryTooLong, MaxCursorLen)
	}
	if q.Namespace != "" && !registry.ValidNamespace(strings.ToLower(q.Namespace)) {
		return fmt.Errorf("%w: namespace %q must look like @main (@, then lowercase letters, digits, - or _)", ErrInvalidQuery, q.Namespace)
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return fmt.Errorf("%w: limit must be between 1 and %d", ErrInvalidQuery, MaxLimit)
	}
	if _, _, err := decodeCursor(q.Cursor); err != nil {
		return err
	}
	return nil
}

// ParseLimit reads a limit query parameter: "" is 0 (the default).
func ParseLimit(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, fmt.Errorf("%w: limit must be a number between 1 and %d", ErrInvalidQuery, MaxLimit)
	}
	return n, nil
}

// normType turns "quality" into "registry:quality".
func normType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if t != "" && !strings.Contains(t, ":") {
		t = "registry:" + t
	}
	return t
}

// Doc is an [Entry] prepared for matching: its identifier, name, path,
// type and tags lowercased (each shares the entry's own string when
// lowercasing changes nothing). Build it once per entry with [Prepare] and
// reuse it across queries.
type Doc struct {
	Entry
	// Published is when Entry's version was published, as the server
	// that built the Doc knows it (zero when unknown). It is not part of
	// the search answer.
	Published           time.Time
	id, name, path, typ string
	tags                []string // trimmed too
}

// Prepare lowercases e for matching.
func Prepare(e Entry) Doc {
	return Doc{
		Entry: e,
		id:    strings.ToLower(e.ID()),
		name:  strings.ToLower(e.Name),
		path:  strings.ToLower(e.Path),
		typ:   strings.ToLower(e.Type),
		tags:  lowerTags(e.Tags),
	}
}

// lowerTags returns tags trimmed and lowercased: tags itself when that
// changes none of them, nil when there are none.
func lowerTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	var out []string
	for i, t := range tags {
		l := strings.ToLower(strings.TrimSpace(t))
		if out == nil && l != t {
			out = make([]string, len(tags))
			copy(out, tags[:i])
		}
		if out != nil {
			out[i] = l
		}
	}
	if out == nil {
		return tags
	}
	return out
}

// A doc's words are the runs of letters and digits of its lowercased
// name, path, type and tags (its keywords) and description. A query word
// matches a doc when it starts one of them.

// isWordRune reports whether r is part of a word.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// wordsIn yields the words of s in order.
func wordsIn(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range s {
			switch in := isWordRune(r); {
			case in && start < 0:
				start = i
			case !in && start >= 0:
				if !yield(s[start:i]) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield(s[start:])
		}
	}
}

func splitWords(s string) []string { return slices.Collect(wordsIn(s)) }

// hasWordPrefix reports whether a word of s starts with w, itself one
// nonempty word. With lower, s is read as strings.ToLower(s), rune by rune
// (as ToLower maps it, an invalid byte reading as U+FFFD), without
// building that string.
func hasWordPrefix(s, w string, lower bool) bool {
	inWord := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if lower {
			r = unicode.ToLower(r)
		}
		in := isWordRune(r)
		if in && !inWord && hasPrefix(s[i:], w, lower) {
			// w holds no separator: the word at i goes on through it.
			return true
		}
		inWord = in
		i += n
	}
	return false
}

// hasPrefix is strings.HasPrefix(s, prefix), s lowercased first if lower.
func hasPrefix(s, prefix string, lower bool) bool {
	if !lower {
		return strings.HasPrefix(s, prefix)
	}
	for _, want := range prefix {
		r, n := utf8.DecodeRuneInString(s)
		if n == 0 || unicode.ToLower(r) != want {
			return false
		}
		s = s[n:]
	}
	return true
}

// keywordStarts reports whether w starts a word of d's name, path, type
// or tags.
func (d *Doc) keywordStarts(w string) bool {
	if hasWordPrefix(d.name, w, false) || hasWordPrefix(d.path, w, false) || hasWordPrefix(d.typ, w, false) {
		return true
	}
	for _, t := range d.tags {
		if hasWordPrefix(t, w, false) {
			return true
		}
	}
	return false
}

// matcher is a validated, lowercased query.
type matcher struct {
	text, ns, typ, tag string
	words              []string
}

func newMatcher(q Query) matcher {
	text := strings.ToLower(strings.TrimSpace(q.Text))
	return matcher{
		text:  text,
		ns:    strings.ToLower(strings.TrimSpace(q.Namespace)),
		typ:   normType(q.Type),
		tag:   strings.ToLower(strings.TrimSpace(q.Tag)),
		words: splitWords(text),
	}
}

// match reports whether d passes the filters and how it matches the text.
func (m *matcher) match(d *Doc) (Match, bool) {
	if !m.passes(d) {
		return "", false
	}
	if mt, ok := m.matchStart(d); ok {
		return mt, true
	}
	return m.matchWords(d)
}

// passes reports whether d passes the filters.
func (m *matcher) passes(d *Doc) bool {
	return (m.ns == "" || d.Namespace == m.ns) &&
		(m.typ == "" || d.typ == m.typ) &&
		(m.tag == "" || slices.Contains(d.tags, m.tag))
}

// matchStart reports the cheap matches: all for empty text, and whether
// the text is or starts the name, path or identifier.
func (m *matcher) matchStart(d *Doc) (Match, bool) {
	switch {
	case m.text == "":
		return MatchAll, true
	case d.name == m.text || d.path == m.text || d.id == m.text:
		return MatchExact, true
	case strings.HasPrefix(d.name, m.text) || strings.HasPrefix(d.path, m.text) || strings.HasPrefix(d.id, m.text):
		return MatchPrefix, true
	}
	return "", false
}

// matchWords reports the matches left once matchStart found none: tag
// when every word of the text starts a keyword of d, word when each
// starts a keyword or a word of its description. A [Set] answers the
// same from its index ([Set.matchWords]).
func (m *matcher) matchWords(d *Doc) (Match, bool) {
	if len(m.words) == 0 {
		return "", false
	}
	mt := MatchTag
	for _, w := range m.words {
		if d.keywordStarts(w) {
			continue
		}
		if !hasWordPrefix(d.Description, w, true) {
			return "", false
		}
		mt = MatchWord
	}
	return mt, true
}

// Matches reports whether d passes q's filters and, if so, how it matches
// q's text. To match many documents, [Run] is cheaper.
func (q Query) Matches(d *Doc) (Match, bool) {
	m := newMatcher(q)
	return m.match(d)
}

// Run answers q over docs: every match, ordered best first and then by
// identifier, cut to one page after q.Cursor. docs need not be sorted. Run
// validates q first.
func Run(q Query, docs []Doc) (Page, error) {
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	return RunEach(q, func(yield func(*Doc) bool) {
		for i := range docs {
			if !yield(&docs[i]) {
				return
			}
		}
	})
}

// RunEach is [Run] over the documents each yields; it lets a caller search
// several slices without copying them. q must be valid. It matches every
// document but keeps only the best limit+1 hits, as [RunSets] does; it
// holds no *Doc after each returns. For a catalog searched many times,
// [RunSets] over prepared [Set]s costs what the query selects instead.
func RunEach(q Query, each func(yield func(*Doc) bool)) (Page, error) {
	pos, limit, err := startRun(q)
	if err != nil {
		return Page{}, err
	}
	m := newMatcher(q)
	t := newTop[Entry](limit + 1)
	each(func(d *Doc) bool {
		if k, ok := t.key(&m, d, func() (Match, bool) { return m.matchWords(d) }); ok && pos.passes(k.rank, k.id) && t.admits(&k) {
			t.offer(k, d.Entry)
		}
		return true
	})
	return t.page(limit, func(e Entry) Entry { return e }), nil
}

// position is where a page starts: after the hit a cursor names.
type position struct {
	set  bool
	rank int
	id   string
}

func (p *position) passes(rank int, id string) bool {
	return !p.set || after(rank, id, p.rank, p.id)
}

// startRun decodes q's cursor and limit.
func startRun(q Query) (position, int, error) {
	rank, id, err := decodeCursor(q.Cursor)
	if err != nil {
		return position{}, 0, err
	}
	if q.Limit < 0 {
		return position{}, 0, fmt.Errorf("%w: limit must be between 1 and %d", ErrInvalidQuery, MaxLimit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	return position{set: q.Cursor != "", rank: rank, id: id}, limit, nil
}

// compareHits orders hits best match first, then by identifier, as
// [Merge] needs (search itself compares precomputed keys).
func compareHits(a, b Hit) int {
	if d := a.Match.Rank() - b.Match.Rank(); d != 0 {
		return d
	}
	return strings.Compare(strings.ToLower(a.ID()), strings.ToLower(b.ID()))
}

// Merge merges pages answered by several sources for one query into one
// list ordered as [Run] orders it, keeping the first hit of each
// identifier, cut to limit (0 means [DefaultLimit]).
func Merge(limit int, pages ...[]Hit) []Hit {
	if limit == 0 {
		limit = DefaultLimit
	}
	seen := map[string]bool{}
	var all []Hit
	for _, p := range pages {
		for _, h := range p {
			if seen[h.ID()] {
				continue
			}
			seen[h.ID()] = true
			all = append(all, h)
		}
	}
	slices.SortStableFunc(all, compareHits)
	if len(all) > limit {
		all = all[:limit]
	}
	if all == nil {
		all = []Hit{}
	}
	return all
}

func after(rank int, id string, afterRank int, afterID string) bool {
	if rank != afterRank {
		return rank > afterRank
	}
	return id > afterID
}

// A cursor is the position of the last hit of a page: its rank and
// lowercased identifier, base64url-encoded so clients treat it as opaque.
// It names only a hit the caller was shown.
func encodeCursor(rank int, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(rank) + ":" + id))
}

func decodeCursor(c string) (rank int, id string, err error) {
	if c == "" {
		return 0, "", nil
	}
	bad := fmt.Errorf("%w: the cursor is not one this server returned; start again without it", ErrInvalidQuery)
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	r, id, ok := strings.Cut(string(raw), ":")
	if !ok || len(r) != 1 || r[0] < '0' || int(r[0]-'0') > MatchAll.Rank() || id == "" || !utf8.ValidString(id) {
		return 0, "", bad
	}
	return int(r[0] - '0'), id, nil
}
