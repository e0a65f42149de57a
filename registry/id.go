package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/ident"
)

// DefaultNamespace is the namespace of an identifier that names none.
const DefaultNamespace = "@main"

// PresetNamespace is the namespace whose identifiers name presets.
const PresetNamespace = "@presets"

// ErrInvalidID is wrapped by every error [ParseID] returns.
var ErrInvalidID = errors.New("invalid registry identifier")

// ValidNamespace reports whether ns is a namespace such as "@main": "@"
// followed by lowercase letters, digits, "-" or "_", starting and ending with
// a letter or digit.
func ValidNamespace(ns string) bool { return ident.Namespace(ns) }

// ValidSegment reports whether s is one lowercase kebab-case path segment.
func ValidSegment(s string) bool { return ident.Segment(s) }

// ValidVersion reports whether v is a full SemVer 2.0 version (no leading
// "v", no ranges).
func ValidVersion(v string) bool { return ident.Version(v) }

// ValidPath reports whether p is one or more valid segments joined by "/".
func ValidPath(p string) bool {
	if p == "" {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if !ValidSegment(s) {
			return false
		}
	}
	return true
}

// Language is the language variant of a registry: [LangTS] or [LangJS]. The
// zero value means "not specified".
type Language string

// The languages a registry can be applied in.
const (
	LangTS Language = "ts"
	LangJS Language = "js"
)

// ID is a parsed registry identifier. The zero value is not a valid ID; use
// [ParseID].
type ID struct {
	// Namespace is the namespace including its "@", e.g. "@main".
	Namespace string
	// Path is the registry path within the namespace, e.g. "quality/eslint".
	Path string
	// Version is the pinned SemVer version, or "" for the latest one.
	Version string
	// Language is the requested language variant, or "" for the default.
	Language Language
	// Variant is the requested named variant ([ValidVariant]; the
	// registry's "variants"), or "" for none. An identifier has a
	// language or a variant suffix, never both.
	Variant string
}

// IDError is the error [ParseID] returns; it names the part that is wrong.
type IDError struct {
	Input  string // the identifier as given
	Part   string // "namespace", "path", "version", "variant" or "identifier"
	Reason string // what is wrong with it and what is expected
	// Suggestion is a valid identifier the input probably meant (the same
	// with its namespace and path lowercased), or "" when there is none.
	Suggestion string

	namespaceOnly bool // from ParseNamespace
}

func (e *IDError) Error() string {
	what := "registry identifier"
	if e.namespaceOnly {
		what = "namespace"
	}
	msg := fmt.Sprintf("invalid %s %q: %s: %s", what, e.Input, e.Part, e.Reason)
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %s?", e.Suggestion)
	}
	return msg
}

// ParseNamespace checks a namespace such as "@company" given on its own
// (a command-line argument, an rc-file key). Like [ParseID] it accepts only
// lowercase: "@Company" is refused with the suggestion "@company". The
// error is an [*IDError] with Part "namespace".
func ParseNamespace(s string) (string, error) {
	fail := func(reason, suggestion string) (string, error) {
		return "", &IDError{Input: s, Part: "namespace", Reason: reason, Suggestion: suggestion, namespaceOnly: true}
	}
	if !strings.HasPrefix(s, "@") {
		sug := ""
		if ValidNamespace("@" + s) {
			sug = "@" + s
		}
		return fail("a namespace starts with @ (e.g. @company)", sug)
	}
	if !ValidNamespace(s) {
		if lower := strings.ToLower(s); lower != s && ValidNamespace(lower) {
			return fail("namespaces are lowercase", lower)
		}
		return fail("use @ followed by lowercase letters, digits, - or _, starting and ending with a letter or digit (e.g. @company)", "")
	}
	return s, nil
}

// Unwrap makes errors.Is(err, ErrInvalidID) true.
func (e *IDError) Unwrap() error { return ErrInvalidID }

// NormalizeNamespace reads a namespace given in a setting or a flag, where
// the "@" may be left out: "rack", " rack " and "@rack" all give "@rack";
// "" (or blanks) gives "". It does not validate: check the result with
// [ParseNamespace]. jig's --default-namespace, jig-server's
// --default-namespace and "jig-server token new --namespace" all read
// their namespace with it, so one spelling works everywhere.
func NormalizeNamespace(s string) string {
	ns := strings.TrimSpace(s)
	if ns != "" && !strings.HasPrefix(ns, "@") {
		ns = "@" + ns
	}
	return ns
}

// IsShorthand reports whether the identifier s names no namespace
// ("runtimes/node"), so that its namespace is the default one: the one a
// [ParseOption] from [WithDefaultNamespace] gives, else [DefaultNamespace].
// It says nothing about whether s is valid.
func IsShorthand(s string) bool { return !strings.HasPrefix(strings.TrimSpace(s), "@") }

// ValidDefaultNamespace reports whether ns may stand for the namespace of
// shorthand identifiers: a valid namespace other than [PresetNamespace]
// (shorthand never names a preset).
func ValidDefaultNamespace(ns string) bool { return ValidNamespace(ns) && ns != PresetNamespace }

// ParseOption changes how [ParseID] reads an identifier.
type ParseOption func(*parseOptions)

type parseOptions struct {
	defaultNamespace string
}

// WithDefaultNamespace makes a shorthand identifier ("runtimes/node") name
// a registry in namespace ns ("@rack") instead of [DefaultNamespace]: the
// namespace a server or an rc-file entry says its shorthand means. An ns
// that [ValidDefaultNamespace] refuses is ignored. The default is
// [DefaultNamespace].
func WithDefaultNamespace(ns string) ParseOption {
	return func(o *parseOptions) {
		if ValidDefaultNamespace(ns) {
			o.defaultNamespace = ns
		}
	}
}

// ParseID parses an identifier of the form
// [@namespace/]path/to/name[@version][:ts|:js|:variant] (a variant as
// [ValidVariant] says; a preset takes a variant only). The namespace defaults to
// [DefaultNamespace] (or the one given with [WithDefaultNamespace]).
// Identifiers are case-sensitive and lowercase: an
// uppercase letter in the namespace or path is refused, never lowercased
// silently, and the error suggests the lowercase form ("Quality/ESLint":
// did you mean quality/eslint?). The error is an [*IDError] naming the
// part that is wrong.
func ParseID(s string, opts ...ParseOption) (ID, error) {
	po := parseOptions{defaultNamespace: DefaultNamespace}
	for _, o := range opts {
		o(&po)
	}
	in := s
	s = strings.TrimSpace(s)
	fail := func(part, reason string) (ID, error) {
		return ID{}, &IDError{Input: in, Part: part, Reason: reason}
	}
	full := s
	var nsRaw, pathRaw string // as written, for a lowercase suggestion
	failCase := func(part, what string) (ID, error) {
		e := &IDError{Input: in, Part: part, Reason: fmt.Sprintf("%q has uppercase letters; identifiers are lowercase", what)}
		sug := strings.ToLower(pathRaw)
		if nsRaw != "" {
			sug = strings.ToLower(nsRaw) + "/" + sug
		}
		sug += versionLangSuffix(full, nsRaw, pathRaw)
		if _, err := ParseID(sug, opts...); err == nil {
			e.Suggestion = sug
		}
		return ID{}, e
	}
	if s == "" {
		return fail("identifier", "it is empty; expected [@namespace/]path[@version][:ts|:js]")
	}
	var id ID
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		suffix := s[i+1:]
		switch {
		case Language(suffix) == LangTS || Language(suffix) == LangJS:
			id.Language = Language(suffix)
		case ValidVariant(suffix):
			id.Variant = suffix
		case suffix == "":
			return fail("variant", "the suffix after : is empty; use :ts, :js or one of the registry's variants (the registry's page or info lists them)")
		case ValidVariant(strings.ToLower(suffix)):
			e := &IDError{Input: in, Part: "variant", Reason: fmt.Sprintf("%q has uppercase letters; variants are lowercase", suffix)}
			if _, err := ParseID(s[:i]+":"+strings.ToLower(suffix), opts...); err == nil {
				e.Suggestion = s[:i] + ":" + strings.ToLower(suffix)
			}
			return ID{}, e
		default:
			shown := suffix
			if len(shown) > MaxVariantName {
				shown = shown[:MaxVariantName] + "…"
			}
			return fail("variant", fmt.Sprintf("%q is not a language or variant suffix; use :ts, :js or a variant name (lowercase letters, digits and -, at most %d characters)", ":"+shown, MaxVariantName))
		}
		s = s[:i]
	}
	if strings.HasPrefix(s, "@") {
		slash := strings.IndexByte(s, '/')
		if slash < 0 {
			return fail("namespace", "a namespace must be followed by / and a registry path, e.g. @main/quality/eslint")
		}
		nsRaw = s[:slash]
		pathRaw = pathPart(s[slash+1:])
		id.Namespace = nsRaw
		if strings.ToLower(nsRaw) != nsRaw && ValidNamespace(strings.ToLower(nsRaw)) {
			return failCase("namespace", nsRaw)
		}
		if !ValidNamespace(id.Namespace) {
			return fail("namespace", fmt.Sprintf("%q must be @ followed by lowercase letters, digits, - or _ (e.g. @main)", s[:slash]))
		}
		s = s[slash+1:]
	} else {
		id.Namespace = po.defaultNamespace
		pathRaw = pathPart(s)
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		id.Version = s[at+1:]
		s = s[:at]
		if id.Version == "" {
			return fail("version", "the version after @ is empty; give a full version such as 1.0.0")
		}
		if !ValidVersion(id.Version) {
			return fail("version", fmt.Sprintf("%q is not a full SemVer version (e.g. 1.0.0); ranges and tags are not allowed", id.Version))
		}
	}
	if s == "" {
		return fail("path", "the registry path is empty; expected something like quality/eslint")
	}
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			return fail("path", "the path has an empty segment (// or a leading or trailing /)")
		}
		if lower := strings.ToLower(seg); lower != seg && ValidSegment(lower) {
			return failCase("path", seg)
		}
		if !ValidSegment(seg) {
			return fail("path", fmt.Sprintf("segment %q must be lowercase kebab case ([a-z0-9] words joined by -)", seg))
		}
		segs[i] = seg
	}
	id.Path = strings.Join(segs, "/")
	if id.Namespace == PresetNamespace {
		if len(segs) != 1 {
			return fail("path", "a preset name is one segment, e.g. @presets/node")
		}
		if id.Version != "" || id.Language != "" {
			return fail("identifier", "a preset takes no @version or :ts/:js suffix (a variant, as in @presets/go-service:distroless, it does)")
		}
	}
	return id, nil
}

// pathPart returns the path of "path[@version]" (the language suffix is
// already removed).
func pathPart(s string) string {
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		return s[:at]
	}
	return s
}

// versionLangSuffix returns what follows the namespace and path in the
// trimmed identifier s: "@version" and ":lang", as written.
func versionLangSuffix(s, nsRaw, pathRaw string) string {
	prefix := pathRaw
	if nsRaw != "" {
		prefix = nsRaw + "/" + pathRaw
	}
	return strings.TrimPrefix(s, prefix)
}

// MustParseID is like [ParseID] but panics on error. It is meant for
// constants in tests and examples.
func MustParseID(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// IsPreset reports whether the identifier names a preset.
func (id ID) IsPreset() bool { return id.Namespace == PresetNamespace }

// Key returns the canonical key "@namespace/path", used for deduplication
// and conflict checks. Version and language are not part of it.
func (id ID) Key() string { return id.Namespace + "/" + id.Path }

// Segments returns the path split on "/".
func (id ID) Segments() []string { return strings.Split(id.Path, "/") }

// Name returns the last path segment.
func (id ID) Name() string {
	if i := strings.LastIndexByte(id.Path, '/'); i >= 0 {
		return id.Path[i+1:]
	}
	return id.Path
}

// String returns the full canonical form "@ns/path[@version][:lang]".
func (id ID) String() string {
	s := id.Key()
	if id.Version != "" {
		s += "@" + id.Version
	}
	if id.Language != "" {
		s += ":" + string(id.Language)
	}
	if id.Variant != "" {
		s += ":" + id.Variant
	}
	return s
}

// Bare returns a copy of id without its language or variant suffix:
// the registry version itself, as sources fetch and label it.
func (id ID) Bare() ID { id.Language, id.Variant = "", ""; return id }

// WithVersion returns a copy of id pinned to version v.
func (id ID) WithVersion(v string) ID { id.Version = v; return id }
