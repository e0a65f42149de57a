package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Migration is one entry of a manifest's "migrations": the steps that
// "jig update" runs on a project when it moves the registry past Version
// (from a version below it to one at or above it), before the three-way
// merge. Each published version lists the migrations of every earlier
// version it wants run (jig reads them from the target version only).
type Migration struct {
	// Version is the full SemVer version that introduced the steps.
	Version string `json:"version"`
	// Steps run in order.
	Steps []MigrationStep `json:"steps"`
}

// The kinds of a [MigrationStep] (its "type").
const (
	// StepRename moves a file the registry wrote, From to To; the user's
	// edits follow it (the merge's base for To is the old version's From).
	StepRename = "rename"
	// StepDelete deletes Path, a file the registry wrote, when the project
	// did not change it.
	StepDelete = "delete"
	// StepJSONSet sets the value at Pointer (RFC 6901) in the JSON file
	// File to Value; the parent must exist. "-" as the last token appends
	// to an array.
	StepJSONSet = "jsonSet"
	// StepJSONDelete deletes the value at Pointer in the JSON file File.
	StepJSONDelete = "jsonDelete"
	// StepRenameScript renames the package.json script From to To.
	StepRenameScript = "renameScript"
	// StepRemoveDependency takes Name out of package.json's dependencies
	// and devDependencies.
	StepRemoveDependency = "removeDependency"
)

// MigrationStep is one step of a [Migration]. Type says which of the other
// fields it uses: rename {from, to}, delete {path}, jsonSet {file,
// pointer, value}, jsonDelete {file, pointer}, renameScript {from, to},
// removeDependency {name}.
type MigrationStep struct {
	Type    string          `json:"type"`
	From    string          `json:"from,omitempty"`
	To      string          `json:"to,omitempty"`
	Path    string          `json:"path,omitempty"`
	File    string          `json:"file,omitempty"`
	Pointer *string         `json:"pointer,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	Name    string          `json:"name,omitempty"`
}

// Limits of a manifest's migrations, so that a registry cannot make an
// update do unbounded work.
const (
	// MaxMigrationSteps bounds the steps of all migrations of a manifest
	// together.
	MaxMigrationSteps = 1000
	// MaxMigrationValue bounds the encoded size of a jsonSet value.
	MaxMigrationValue = 64 << 10
	// MaxPointerLength bounds a JSON pointer's length in bytes.
	MaxPointerLength = 1024
)

// ErrInvalidMigration is wrapped by every error of [ValidateMigrations].
var ErrInvalidMigration = errors.New("invalid migration")

// String describes the step for people: "rename .eslintrc.json ->
// eslint.config.json", "jsonSet tsconfig.json /compilerOptions/target".
func (s MigrationStep) String() string {
	ptr := ""
	if s.Pointer != nil {
		ptr = *s.Pointer
		if ptr == "" {
			ptr = `""`
		}
	}
	switch s.Type {
	case StepRename:
		return "rename " + s.From + " -> " + s.To
	case StepDelete:
		return "delete " + s.Path
	case StepJSONSet:
		return "jsonSet " + s.File + " " + ptr
	case StepJSONDelete:
		return "jsonDelete " + s.File + " " + ptr
	case StepRenameScript:
		return "renameScript " + s.From + " -> " + s.To
	case StepRemoveDependency:
		return "removeDependency " + s.Name
	}
	return s.Type
}

// ValidateMigrations checks the migrations of the manifest at version
// manifestVersion: each version a full SemVer version at most
// manifestVersion and listed once, at most [MaxMigrationSteps] steps in
// all, every step of a known type with exactly its fields, every path
// clean as a file target ([CleanTarget]: relative, inside the project,
// not in .git, not jig.json; package.json may not be renamed or deleted),
// every pointer RFC 6901 and every jsonSet value JSON of at most
// [MaxMigrationValue] bytes. Errors wrap [ErrInvalidMigration] and say
// where ("migrations[1].steps[0]").
func ValidateMigrations(ms []Migration, manifestVersion string) error {
	seen := map[string]bool{}
	total := 0
	for i, m := range ms {
		at := fmt.Sprintf("migrations[%d]", i)
		if !ValidVersion(m.Version) {
			return fmt.Errorf("%w: %s: version %q is not a full SemVer version (e.g. 2.0.0)", ErrInvalidMigration, at, m.Version)
		}
		if ValidVersion(manifestVersion) && CompareVersions(m.Version, manifestVersion) > 0 {
			return fmt.Errorf("%w: %s: version %s is newer than the registry's version %s", ErrInvalidMigration, at, m.Version, manifestVersion)
		}
		if seen[m.Version] {
			return fmt.Errorf("%w: %s: version %s is listed twice; put its steps in one entry", ErrInvalidMigration, at, m.Version)
		}
		seen[m.Version] = true
		total += len(m.Steps)
		if total > MaxMigrationSteps {
			return fmt.Errorf("%w: more than %d steps in all", ErrInvalidMigration, MaxMigrationSteps)
		}
		for j, s := range m.Steps {
			if err := s.validate(); err != nil {
				return fmt.Errorf("%w: %s.steps[%d]: %w", ErrInvalidMigration, at, j, err)
			}
		}
	}
	return nil
}

// validate checks one step (see [ValidateMigrations]).
func (s MigrationStep) validate() error {
	type field struct {
		name string
		set  bool
	}
	fields := []field{
		{"from", s.From != ""}, {"to", s.To != ""}, {"path", s.Path != ""}, {"file", s.File != ""},
		{"pointer", s.Pointer != nil}, {"value", len(s.Value) > 0}, {"name", s.Name != ""},
	}
	var want []string
	switch s.Type {
	case StepRename, StepRenameScript:
		want = []string{"from", "to"}
	case StepDelete:
		want = []string{"path"}
	case StepJSONSet:
		want = []string{"file", "pointer", "value"}
	case StepJSONDelete:
		want = []string{"file", "pointer"}
	case StepRemoveDependency:
		want = []string{"name"}
	default:
		return fmt.Errorf("type %q is not one of rename, delete, jsonSet, jsonDelete, renameScript, removeDependency", s.Type)
	}
	for _, f := range fields {
		wanted := strings.Contains(" "+strings.Join(want, " ")+" ", " "+f.name+" ")
		switch {
		case wanted && !f.set:
			return fmt.Errorf("%s needs %q", s.Type, f.name)
		case !wanted && f.set:
			return fmt.Errorf("%s does not take %q", s.Type, f.name)
		}
	}
	path := func(what, p string) error {
		c, err := CleanTarget(p)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if c != p {
			return fmt.Errorf("%s %q is not in clean form; write %q", what, p, c)
		}
		return nil
	}
	switch s.Type {
	case StepRename:
		if err := path("from", s.From); err != nil {
			return err
		}
		if err := path("to", s.To); err != nil {
			return err
		}
		if s.From == s.To {
			return errors.New("rename: from and to are the same")
		}
		if s.From == "package.json" || s.To == "package.json" {
			return errors.New("rename: package.json cannot be renamed")
		}
	case StepDelete:
		if err := path("path", s.Path); err != nil {
			return err
		}
		if s.Path == "package.json" {
			return errors.New("delete: package.json cannot be deleted")
		}
	case StepJSONSet, StepJSONDelete:
		if err := path("file", s.File); err != nil {
			return err
		}
		toks, err := ParsePointer(*s.Pointer)
		if err != nil {
			return err
		}
		if s.Type == StepJSONDelete && len(toks) == 0 {
			return errors.New(`jsonDelete: the pointer "" names the whole document; delete the file instead`)
		}
		if s.Type == StepJSONSet {
			if len(s.Value) > MaxMigrationValue {
				return fmt.Errorf("jsonSet: value is %d bytes, more than %d", len(s.Value), MaxMigrationValue)
			}
			if !json.Valid(s.Value) {
				return errors.New("jsonSet: value is not JSON")
			}
		}
	case StepRenameScript:
		for _, n := range []string{s.From, s.To} {
			if len(n) > 214 || strings.IndexFunc(n, DeceptiveRune) >= 0 {
				return fmt.Errorf("renameScript: %q is not a script name", n)
			}
		}
		if s.From == s.To {
			return errors.New("renameScript: from and to are the same")
		}
	case StepRemoveDependency:
		if !dependencyName(s.Name) {
			return fmt.Errorf("removeDependency: %q is not an npm package name", s.Name)
		}
	}
	return nil
}

// ParsePointer splits an RFC 6901 JSON pointer into its reference tokens,
// unescaped ("~1" is "/", "~0" is "~"): "" is the whole document (no
// tokens), any other pointer starts with "/". It refuses a pointer longer
// than [MaxPointerLength], deeper than [MaxJSONDepth] tokens, or with a "~"
// not followed by 0 or 1.
func ParsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if len(p) > MaxPointerLength {
		return nil, fmt.Errorf("pointer is %d bytes, more than %d", len(p), MaxPointerLength)
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("pointer %s must be empty or start with / (RFC 6901), e.g. /compilerOptions/target", strconv.Quote(p))
	}
	raw := strings.Split(p[1:], "/")
	if len(raw) > MaxJSONDepth {
		return nil, fmt.Errorf("pointer %s has %d tokens, more than %d", strconv.Quote(p), len(raw), MaxJSONDepth)
	}
	out := make([]string, len(raw))
	for i, t := range raw {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("pointer %s: ~ must be followed by 0 or 1 (~0 is ~, ~1 is /)", strconv.Quote(p))
			}
		}
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return out, nil
}

// MigrationsBetween returns the migrations of ms whose version v is in
// (from, to] (from < v <= to), in version order; nil when from is not
// below to.
func MigrationsBetween(ms []Migration, from, to string) []Migration {
	var out []Migration
	for _, m := range ms {
		if CompareVersions(m.Version, from) > 0 && CompareVersions(m.Version, to) <= 0 {
			out = append(out, m)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && CompareVersions(out[j-1].Version, out[j].Version) > 0; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// dependencyName reports whether name can be an npm dependency's name:
// [ValidNPMName]'s characters, optionally under a scope ("@types/node"),
// core module names included.
func dependencyName(name string) bool {
	if len(name) == 0 || len(name) > maxNPMNameLength {
		return false
	}
	part := func(p string) bool {
		if p == "" || p[0] == '.' || p[0] == '_' {
			return false
		}
		for i := 0; i < len(p); i++ {
			if !npmNameByte(p[i]) {
				return false
			}
		}
		return true
	}
	if scope, rest, ok := strings.Cut(name, "/"); ok {
		return strings.HasPrefix(scope, "@") && part(scope[1:]) && part(rest)
	}
	return part(name)
}

// ChainRenames follows renames given in the order they run to where each
// name ends: a -> b then b -> c gives {a: c}; a name renamed twice from
// its first name keeps its first move.
func ChainRenames(renames [][2]string) map[string]string {
	out := map[string]string{}
	for _, r := range renames {
		moved := false
		for k, v := range out {
			if v == r[0] {
				out[k], moved = r[1], true
			}
		}
		if _, ok := out[r[0]]; !ok && !moved {
			out[r[0]] = r[1]
		}
	}
	return out
}

// FileRenames returns where the rename steps of the migrations ms for the
// versions in (from, to] take each file the from version wrote, in
// version order and chained ([ChainRenames]); ms are a target version's
// migrations, which list those of the earlier versions it wants run.
func FileRenames(ms []Migration, from, to string) map[string]string {
	var in []Migration
	for _, m := range ms {
		if CompareVersions(m.Version, from) > 0 && CompareVersions(m.Version, to) <= 0 {
			in = append(in, m)
		}
	}
	slices.SortStableFunc(in, func(a, b Migration) int { return CompareVersions(a.Version, b.Version) })
	var renames [][2]string
	for _, m := range in {
		for _, s := range m.Steps {
			if s.Type == StepRename && s.From != "" && s.To != "" {
				renames = append(renames, [2]string{s.From, s.To})
			}
		}
	}
	return ChainRenames(renames)
}
