package impact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// Level is the size of a change in SemVer terms: [None], [Patch], [Minor]
// or [Major]. Levels are ordered: a larger value is a bigger change.
type Level int

// The levels of a change.
const (
	None Level = iota
	Patch
	Minor
	Major
)

var levelNames = [...]string{"none", "patch", "minor", "major"}

// String returns "none", "patch", "minor" or "major".
func (l Level) String() string {
	if l < None || l > Major {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// MarshalText writes the level as [Level.String] does.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level [Level.String] wrote.
func (l *Level) UnmarshalText(b []byte) error {
	i := slices.Index(levelNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("impact: unknown level %q (want none, patch, minor or major)", b)
	}
	*l = Level(i)
	return nil
}

// Release is one version of a registry to compare.
type Release struct {
	// Manifest is the version's registry.json. Required.
	Manifest *registry.Manifest
	// Files are the package files by their files[].path (normalised, as
	// [registry.NormalizeFilePath] writes them). A file the manifest
	// declares but Files lacks compares as empty.
	Files map[string][]byte
	// Raw is the registry.json document; [Compare] reads the migrations
	// declared in it. Nil means none.
	Raw []byte
}

// The kinds of thing a [Change] is about.
const (
	KindFile               = "file"
	KindKey                = "key"
	KindDependency         = "dependency"
	KindDevDependency      = "devDependency"
	KindScript             = "script"
	KindRegistryDependency = "registry dependency"
	KindMigration          = "migration"
)

// The verbs of a [Change].
const (
	VerbRemoves  = "removes"
	VerbAdds     = "adds"
	VerbChanges  = "changes"
	VerbMigrates = "migrates"
	VerbRenames  = "renames"
)

// Change is one difference between two versions and its [Level].
type Change struct {
	Level Level `json:"level"`
	// Verb is what the new version does: [VerbRemoves], [VerbAdds],
	// [VerbChanges], [VerbRenames] (a file or script a migration renames)
	// or [VerbMigrates].
	Verb string `json:"verb"`
	// Kind is what it does it to: [KindFile], [KindKey], [KindDependency],
	// ...
	Kind string `json:"kind"`
	// Subject names it: a file's target, a JSON key as "<target>#<JSON
	// pointer>", a package name, a script name, a migration's version.
	Subject string `json:"subject"`
	// Detail says more, e.g. "^1.0.0 -> ^2.0.0" or the package file a
	// removed target came from; "" when there is nothing to add.
	Detail string `json:"detail,omitempty"`
	// Languages are the language variants the change concerns; nil means
	// every one.
	Languages []registry.Language `json:"languages,omitempty"`
}

// String reads "removes file a.txt (templates/a.txt)", with " in :js
// projects" when the change concerns one language only.
func (c Change) String() string {
	s := c.Verb + " " + c.Kind + " " + c.Subject
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	if len(c.Languages) == 1 {
		s += " in :" + string(c.Languages[0]) + " projects"
	}
	return s
}

// Report is the impact of a new version over an earlier one.
type Report struct {
	// From is the earlier version, To the new one.
	From string `json:"from"`
	To   string `json:"to"`
	// Level is the largest level of Changes; [None] when nothing changed.
	Level Level `json:"level"`
	// Changes are the differences, largest level first, then by kind and
	// subject. Empty (not nil) when nothing changed.
	Changes []Change `json:"changes"`
	// Bump is the level the version numbers promise ([VersionLevel] of
	// From and To); Needed the lowest version that covers Level
	// ([Next]).
	Bump   Level  `json:"bump"`
	Needed string `json:"needed"`
	// OK reports whether the bump covers the changes ([Report.Check] is
	// nil).
	OK bool `json:"ok"`
	// Migration, when not nil, is the "migrations" entry that would make
	// the new version smaller: a file (or script) it removes and one it
	// adds look like one renamed, and declaring the rename makes that a
	// minor change. Only set when it lowers the version needed.
	Migration *MigrationHint `json:"migration,omitempty"`
}

// MigrationHint is a "migrations" entry a new version could declare.
type MigrationHint struct {
	// Version is the entry's version: the new version when it covers the
	// changes left once the renames are declared, else the lowest that
	// does; publish the registry as this version.
	Version string `json:"version"`
	// Steps are "rename" (file) and "renameScript" steps, each from the
	// old version's name to the new one's.
	Steps []RenameStep `json:"steps"`
}

// RenameStep is one step of a [MigrationHint].
type RenameStep struct {
	// Type is "rename" (a file's target) or "renameScript".
	Type string `json:"type"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Declaration returns h as the JSON of a "migrations" entry, ready to
// paste into registry.json:
// {"version": "1.1.0", "steps": [{"type": "rename", "from": "a", "to": "b"}]}.
func (h *MigrationHint) Declaration() string {
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	steps := make([]string, len(h.Steps))
	for i, s := range h.Steps {
		steps[i] = fmt.Sprintf(`{"type": %s, "from": %s, "to": %s}`, q(s.Type), q(s.From), q(s.To))
	}
	return fmt.Sprintf(`{"version": %s, "steps": [%s]}`, q(h.Version), strings.Join(steps, ", "))
}

// languages are the variants every registry can be rendered in.
var languages = []registry.Language{registry.LangTS, registry.LangJS}

// Compare returns the impact of next over old (see the package
// documentation for the rules). Both are compared in each language
// variant a project can install ([registry.Manifest.ForLanguage]); a
// change found in only one of them says so. The version numbers of the
// manifests fill From, To, Bump, Needed and OK; a version that does not
// parse counts as no bump at all.
func Compare(old, next Release) *Report {
	migs := Migrations(next.Raw)
	c := collector{found: map[string]*Change{},
		renames: renamesIn(migs, old.Manifest.Version, next.Manifest.Version, func(m Migration) [][2]string { return m.Renames }),
		scripts: renamesIn(migs, old.Manifest.Version, next.Manifest.Version, func(m Migration) [][2]string { return m.Scripts }),
	}
	for _, lang := range languages {
		c.lang = lang
		om, nm := old.Manifest.ForLanguage(lang), next.Manifest.ForLanguage(lang)
		c.files(targets(om, old.Files), targets(nm, next.Files))
		c.names(KindDependency, om.Dependencies, nm.Dependencies, Minor, nil)
		c.names(KindDevDependency, om.DevDependencies, nm.DevDependencies, Minor, nil)
		c.names(KindScript, om.Scripts, nm.Scripts, Minor, c.scripts)
		c.names(KindRegistryDependency, setOf(om.RegistryDependencies), setOf(nm.RegistryDependencies), Minor, nil)
	}
	c.lang = ""
	for _, v := range migs {
		if registry.CompareVersions(v.Version, old.Manifest.Version) > 0 && registry.CompareVersions(v.Version, next.Manifest.Version) <= 0 {
			c.add(Change{Level: Minor, Verb: VerbMigrates, Kind: KindMigration, Subject: v.Version, Detail: english.Count(v.Steps, "step", "steps")})
		}
	}
	r := &Report{From: old.Manifest.Version, To: next.Manifest.Version, Changes: c.list()}
	for _, ch := range r.Changes {
		r.Level = max(r.Level, ch.Level)
	}
	r.Bump, _ = VersionLevel(r.From, r.To)
	r.Needed = Next(r.From, r.Level)
	r.OK = r.Bump >= r.Level
	if !r.OK {
		r.Migration = r.renameHint(old, next)
	}
	return r
}

// renameHint pairs what r says the new version removes with what it adds,
// file with file and script with script, as renames: by equal content
// (or command), else by equal base name, else the one removed with the
// one added when a single one of each is left. It returns the migration
// that declares them, when that lowers the version needed.
func (r *Report) renameHint(old, next Release) *MigrationHint {
	content := func(rel Release, kind, name string) ([]byte, bool) {
		for _, lang := range languages {
			m := rel.Manifest.ForLanguage(lang)
			if kind == KindScript {
				if v, ok := m.Scripts[name]; ok {
					return []byte(v), true
				}
				continue
			}
			if t, ok := targets(m, rel.Files)[name]; ok {
				return t.content, true
			}
		}
		return nil, false
	}
	paired := map[string]bool{} // "verb\x00kind\x00subject" of a paired change
	key := func(c Change) string { return c.Verb + "\x00" + c.Kind + "\x00" + c.Subject }
	var steps []RenameStep
	for _, kind := range []string{KindFile, KindScript} {
		var removed, added []Change
		for _, c := range r.Changes {
			switch {
			case c.Kind != kind:
			case c.Verb == VerbRemoves:
				removed = append(removed, c)
			case c.Verb == VerbAdds:
				added = append(added, c)
			}
		}
		pair := func(match func(from, to Change) bool) {
			for _, f := range removed {
				for _, t := range added {
					if !paired[key(f)] && !paired[key(t)] && match(f, t) {
						paired[key(f)], paired[key(t)] = true, true
						typ := "rename"
						if kind == KindScript {
							typ = "renameScript"
						}
						steps = append(steps, RenameStep{Type: typ, From: f.Subject, To: t.Subject})
					}
				}
			}
		}
		pair(func(f, t Change) bool {
			a, okA := content(old, kind, f.Subject)
			b, okB := content(next, kind, t.Subject)
			return okA && okB && bytes.Equal(a, b)
		})
		if kind == KindFile {
			pair(func(f, t Change) bool { return path.Base(f.Subject) == path.Base(t.Subject) })
		}
		left := func(cs []Change) int {
			n := 0
			for _, c := range cs {
				if !paired[key(c)] {
					n++
				}
			}
			return n
		}
		if left(removed) == 1 && left(added) == 1 {
			pair(func(Change, Change) bool { return true })
		}
	}
	if len(steps) == 0 {
		return nil
	}
	level := Minor
	for _, c := range r.Changes {
		if !paired[key(c)] {
			level = max(level, c.Level)
		}
	}
	if Next(r.From, level) == r.Needed {
		return nil
	}
	v := r.To
	if ok, err := Covers(r.From, r.To, level); err != nil || !ok {
		v = Next(r.From, level)
	}
	return &MigrationHint{Version: v, Steps: steps}
}

// Check returns nil when the new version's number covers its changes,
// else an [*UnderBumpError] listing the changes it does not cover.
func (r *Report) Check() error {
	if r.OK {
		return nil
	}
	e := &UnderBumpError{From: r.From, To: r.To, Level: r.Level, Needed: r.Needed, Migration: r.Migration}
	for _, c := range r.Changes {
		if c.Level > r.Bump {
			e.Changes = append(e.Changes, c)
		}
	}
	return e
}

// ErrUnderBumped is matched by an [*UnderBumpError].
var ErrUnderBumped = errors.New("the version number does not cover the changes")

// UnderBumpError is a new version whose number promises a smaller change
// than it makes. It matches [ErrUnderBumped].
type UnderBumpError struct {
	From, To string
	// Level is the largest change; Needed the lowest version covering it.
	Level  Level
	Needed string
	// Changes are the changes the version number does not cover.
	Changes []Change
	// Migration is [Report.Migration]: the renames to declare instead.
	Migration *MigrationHint
}

// Error reads "1.0.1 removes file a.txt (major change): publish it as
// 2.0.0", listing every uncovered change. With a [MigrationHint] it goes
// on: "; or, if a.txt was renamed to b.txt, declare the rename (a minor
// change) in registry.json's "migrations": {...} and publish it as
// 1.1.0".
func (e *UnderBumpError) Error() string {
	parts := make([]string, len(e.Changes))
	for i, c := range e.Changes {
		parts[i] = fmt.Sprintf("%s (%s change)", c, c.Level)
	}
	msg := fmt.Sprintf("%s %s: publish it as %s", e.To, strings.Join(parts, "; "), e.Needed)
	if e.Migration != nil {
		msg += "; or, " + e.Migration.Explain()
	}
	return msg
}

// Explain reads "if a.txt was renamed to b.txt, declare the rename (a
// minor change) in registry.json's "migrations": {...} and publish it as
// 1.1.0".
func (h *MigrationHint) Explain() string {
	moves := make([]string, len(h.Steps))
	for i, s := range h.Steps {
		what := ""
		if s.Type == "renameScript" {
			what = "script "
		}
		moves[i] = fmt.Sprintf("%s%s was renamed to %s", what, s.From, s.To)
	}
	return fmt.Sprintf("if %s, declare %s (a minor change) in registry.json's \"migrations\": %s and publish it as %s",
		strings.Join(moves, " and "), english.Plural(len(h.Steps), "the rename", "the renames"), h.Declaration(), h.Version)
}

// Unwrap makes errors.Is(err, ErrUnderBumped) true.
func (e *UnderBumpError) Unwrap() error { return ErrUnderBumped }

// VersionLevel returns the largest change that moving from from to to may
// make: [Major] for 1.4.2 to 2.0.0, [Minor] for 1.4.2 to 1.5.0, [Patch]
// for 1.4.2 to 1.4.3. Before 1.0.0 the levels shift down as npm's caret
// ranges read them: 0.2.3 to 0.3.0 is [Major], 0.2.3 to 0.2.4 is [Minor]
// (features and fixes). Within one pre-release train (from is a
// pre-release and to has the same major.minor.patch) anything goes:
// [Major]. A to that is not above from is [None]. Either version not
// being SemVer is an error.
func VersionLevel(from, to string) (Level, error) {
	f, err := parse(from)
	if err != nil {
		return None, err
	}
	t, err := parse(to)
	if err != nil {
		return None, err
	}
	switch {
	case registry.CompareVersions(to, from) <= 0:
		return None, nil
	case f.pre && t.core == f.core:
		return Major, nil
	case t.core[0] > f.core[0]:
		return Major, nil
	case t.core[0] < f.core[0]:
		return None, nil
	case f.core[0] == 0 && t.core[1] > f.core[1]:
		return Major, nil
	case f.core[0] == 0 && t.core[1] == f.core[1] && t.core[2] > f.core[2]:
		return Minor, nil
	case t.core[1] > f.core[1]:
		return Minor, nil
	case t.core[1] == f.core[1] && t.core[2] > f.core[2]:
		return Patch, nil
	}
	return None, nil
}

// version is a parsed SemVer version: major, minor, patch and whether it
// is a pre-release.
type version struct {
	core [3]uint64
	pre  bool
}

// parse reads a SemVer version ([registry.ValidVersion]) whose numbers fit
// in 64 bits.
func parse(v string) (version, error) {
	if !registry.ValidVersion(v) {
		return version{}, fmt.Errorf("impact: %q is not a SemVer version", v)
	}
	v, _, _ = strings.Cut(v, "+")
	core, _, pre := strings.Cut(v, "-")
	var out version
	out.pre = pre
	for i, n := range strings.SplitN(core, ".", 3) {
		x, err := strconv.ParseUint(n, 10, 64)
		if err != nil || x == 1<<64-1 {
			return version{}, fmt.Errorf("impact: version %q: %s is too large", v, n)
		}
		out.core[i] = x
	}
	return out, nil
}

// Covers reports whether publishing to after from is a big enough bump
// for a change of level l ([VersionLevel]).
func Covers(from, to string, l Level) (bool, error) {
	got, err := VersionLevel(from, to)
	return got >= l, err
}

// Next returns the lowest release after from that covers a change of
// level l: 1.4.2 gives 2.0.0 (Major), 1.5.0 (Minor), 1.4.3 (Patch or
// None); 0.2.3 gives 0.3.0 (Major) and 0.2.4 (Minor, Patch or None). For a
// pre-release it is its release (2.0.0-rc.1 gives 2.0.0). A from that is
// not SemVer gives "".
func Next(from string, l Level) string {
	f, err := parse(from)
	if err != nil {
		return ""
	}
	maj, min, pat := f.core[0], f.core[1], f.core[2]
	switch {
	case f.pre:
	case l == Major && maj == 0:
		min, pat = min+1, 0
	case l == Major:
		maj, min, pat = maj+1, 0, 0
	case l == Minor && maj > 0:
		min, pat = min+1, 0
	default:
		pat++
	}
	return fmt.Sprintf("%d.%d.%d", maj, min, pat)
}

// Migration is one entry of a manifest's "migrations" list, as far as
// [Compare] reads it.
type Migration struct {
	Version string
	// Steps is the number of steps.
	Steps int
	// Renames are its "rename" steps (file from -> to) and Scripts its
	// "renameScript" steps (script from -> to), in order.
	Renames, Scripts [][2]string
}

// Migrations returns the entries of the "migrations" list of the
// registry.json document raw ({"version": ..., "steps": [...]}); nil when
// raw is nil, not JSON or has no such list. Entries without a SemVer
// version are left out.
func Migrations(raw []byte) []Migration {
	var doc struct {
		Migrations []struct {
			Version string `json:"version"`
			Steps   []struct {
				Type string `json:"type"`
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"steps"`
		} `json:"migrations"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	var out []Migration
	for _, m := range doc.Migrations {
		if !registry.ValidVersion(m.Version) {
			continue
		}
		mig := Migration{Version: m.Version, Steps: len(m.Steps)}
		for _, st := range m.Steps {
			switch {
			case st.From == "" || st.To == "":
			case st.Type == "rename":
				mig.Renames = append(mig.Renames, [2]string{st.From, st.To})
			case st.Type == "renameScript":
				mig.Scripts = append(mig.Scripts, [2]string{st.From, st.To})
			}
		}
		out = append(out, mig)
	}
	return out
}

// renamesIn returns where the rename steps of the migrations for versions
// in (from, to] take each renamed name, in version order and chained
// (a -> b in 1.1.0 and b -> c in 1.2.0 give a -> c); pick chooses the
// file or the script renames.
func renamesIn(ms []Migration, from, to string, pick func(Migration) [][2]string) map[string]string {
	var in []Migration
	for _, m := range ms {
		if registry.CompareVersions(m.Version, from) > 0 && registry.CompareVersions(m.Version, to) <= 0 {
			in = append(in, m)
		}
	}
	slices.SortStableFunc(in, func(a, b Migration) int { return registry.CompareVersions(a.Version, b.Version) })
	var renames [][2]string
	for _, m := range in {
		renames = append(renames, pick(m)...)
	}
	return registry.ChainRenames(renames)
}

// target is what a manifest writes to one project path.
type target struct {
	content []byte
	path    string // the package file, "" for inline content
	json    bool
}

// targets maps each target m writes to its content.
func targets(m *registry.Manifest, files map[string][]byte) map[string]target {
	out := map[string]target{}
	for _, f := range m.Files {
		name := f.Target
		if t, err := registry.CleanTarget(f.Target); err == nil {
			name = t
		}
		var b []byte
		path := ""
		if f.Content != nil && f.Type != registry.FileAsset {
			b = []byte(*f.Content)
		} else if f.Path != "" {
			path = registry.NormalizeFilePath(f.Path)
			b = files[path]
		}
		t, seen := out[name]
		if seen {
			// Several entries for one target merge into it; any change
			// in any of them changes the target.
			b = append(append(append([]byte{}, t.content...), 0), b...)
		}
		st := merge.StrategyFor(name, f.MergeStrategy)
		out[name] = target{content: b, path: path, json: st == registry.StrategyJSON || strings.HasSuffix(name, ".json")}
	}
	return out
}

func setOf(list []string) map[string]string {
	if len(list) == 0 {
		return nil
	}
	m := make(map[string]string, len(list))
	for _, s := range list {
		m[s] = ""
	}
	return m
}

// collector gathers changes across the language variants.
type collector struct {
	lang  registry.Language
	found map[string]*Change
	order []string
	// renames and scripts are the file and script renames the new
	// version's migrations make, old name -> new name.
	renames, scripts map[string]string
}

func (c *collector) add(ch Change) {
	k := ch.Verb + "\x00" + ch.Kind + "\x00" + ch.Subject
	if have, ok := c.found[k]; ok {
		if c.lang != "" && !slices.Contains(have.Languages, c.lang) {
			have.Languages = append(have.Languages, c.lang)
		}
		have.Level = max(have.Level, ch.Level)
		return
	}
	if c.lang != "" {
		ch.Languages = []registry.Language{c.lang}
	}
	c.found[k] = &ch
	c.order = append(c.order, k)
}

func (c *collector) list() []Change {
	out := make([]Change, 0, len(c.order))
	for _, k := range c.order {
		ch := *c.found[k]
		if len(ch.Languages) == len(languages) {
			ch.Languages = nil
		}
		out = append(out, ch)
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		if a.Level != b.Level {
			return int(b.Level - a.Level)
		}
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind)
		}
		return strings.Compare(a.Subject, b.Subject)
	})
	return out
}

func (c *collector) files(old, next map[string]target) {
	renamedTo := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		o := old[name]
		n, ok := next[name]
		if to, renamed := c.renames[name]; !ok && renamed {
			if nn, there := next[to]; there {
				// A migration moves the file, and the project's edits
				// with it: a minor change (plus what its content does).
				renamedTo[to] = true
				c.add(Change{Level: Minor, Verb: VerbRenames, Kind: KindFile, Subject: name, Detail: "to " + to + " by a migration"})
				if !bytes.Equal(o.content, nn.content) {
					c.add(Change{Level: Patch, Verb: VerbChanges, Kind: KindFile, Subject: to})
				}
				continue
			}
		}
		if !ok {
			detail := ""
			if o.path != "" && o.path != name {
				detail = o.path
			}
			c.add(Change{Level: Major, Verb: VerbRemoves, Kind: KindFile, Subject: name, Detail: detail})
			continue
		}
		if bytes.Equal(o.content, n.content) {
			continue
		}
		if o.json && n.json {
			ok, errO := merge.JSONKeys(name, o.content)
			nk, errN := merge.JSONKeys(name, n.content)
			if errO == nil && errN == nil {
				have := map[string]bool{}
				for _, k := range nk {
					have[k] = true
				}
				for _, k := range ok {
					if !have[k] {
						c.add(Change{Level: Major, Verb: VerbRemoves, Kind: KindKey, Subject: name + "#" + k})
					}
				}
			}
		}
		c.add(Change{Level: Patch, Verb: VerbChanges, Kind: KindFile, Subject: name})
	}
	for _, name := range slices.Sorted(maps.Keys(next)) {
		if _, ok := old[name]; !ok && !renamedTo[name] {
			c.add(Change{Level: Minor, Verb: VerbAdds, Kind: KindFile, Subject: name})
		}
	}
}

// names compares two name -> value maps (dependencies, scripts): a removed
// name is Major, an added one level added, a changed value Patch.
func (c *collector) names(kind string, old, next map[string]string, added Level, renames map[string]string) {
	renamedTo := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		nv, ok := next[k]
		if to, renamed := renames[k]; !ok && renamed {
			if _, there := next[to]; there {
				renamedTo[to] = true
				c.add(Change{Level: Minor, Verb: VerbRenames, Kind: kind, Subject: k, Detail: "to " + to + " by a migration"})
				continue
			}
		}
		switch {
		case !ok:
			c.add(Change{Level: Major, Verb: VerbRemoves, Kind: kind, Subject: k})
		case nv != old[k]:
			ch := Change{Level: Patch, Verb: VerbChanges, Kind: kind, Subject: k}
			if kind == KindDependency || kind == KindDevDependency {
				ch.Detail = old[k] + " -> " + nv
			}
			c.add(ch)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if _, ok := old[k]; !ok && !renamedTo[k] {
			c.add(Change{Level: added, Verb: VerbAdds, Kind: kind, Subject: k})
		}
	}
}
