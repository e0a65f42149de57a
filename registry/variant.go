package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/ident"
)

// Named variants: beyond the ts/js languages, a registry may declare
// variants ("distroless", "grpc", "fastapi") in registry.json's
// "variants", each a set of files and dependencies merged over the top
// level as a language block is. An identifier picks one with its suffix
// ("@main/services/go-service:distroless"), as ":ts" picks a language.
const (
	// MaxVariants is the most variants one registry may declare.
	MaxVariants = 64
	// MaxVariantName is the longest variant name, in bytes.
	MaxVariantName = 40
)

// ErrUnknownVariant is matched by an [*UnknownVariantError].
var ErrUnknownVariant = errors.New("unknown variant")

// ValidVariant reports whether name can name a variant: one lowercase
// kebab-case word group ([a-z0-9] words joined by "-", the grammar of a
// path segment), at most [MaxVariantName] bytes, and not "ts" or "js",
// which are languages. Lowercase only, so two variants never differ by
// case alone; no ".", "/" or "..", so a name is never a path.
func ValidVariant(name string) bool {
	return len(name) <= MaxVariantName && ident.Segment(name) && Language(name) != LangTS && Language(name) != LangJS
}

// VariantBlock is what a named variant adds to a registry: dependencies
// (npm ranges, go.mod or pyproject.toml requirements, by the registry's
// ecosystem) and files, merged over the top level (and the language block)
// the way a language block is: a file with a target the top level has
// replaces it.
type VariantBlock struct {
	// Description says what the variant is, for jig info, pickers and
	// the catalog.
	Description     string            `json:"description,omitempty"`
	Dependencies    map[string]string `json:"dependencies,omitempty"`
	DevDependencies map[string]string `json:"devDependencies,omitempty"`
	Files           []File            `json:"files,omitempty"`
}

// VariantNames returns the names of the manifest's variants, sorted; nil
// when it has none.
func (m *Manifest) VariantNames() []string {
	if len(m.Variants) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m.Variants))
}

// ForVariant returns a copy of the manifest for language lang
// ([Manifest.ForLanguage]) with the variants[variant] block merged over
// it the same way; variant "" is the top level alone. The copy's
// Languages and Variants are nil. An unknown variant is an
// [*UnknownVariantError]; check with [Manifest.CheckVariant] first where
// that matters.
func (m *Manifest) ForVariant(lang Language, variant string) *Manifest {
	c := m.ForLanguage(lang)
	c.Variants = nil
	blk, ok := m.Variants[variant]
	if variant == "" || !ok {
		return c
	}
	return c.merged("variants."+variant+".", LanguageBlock{Dependencies: blk.Dependencies, DevDependencies: blk.DevDependencies, Files: blk.Files})
}

// CheckVariant returns nil when variant is "" or one of the manifest's
// variants, else an [*UnknownVariantError] for the registry id.
func (m *Manifest) CheckVariant(id, variant string) error {
	if variant == "" {
		return nil
	}
	if _, ok := m.Variants[variant]; ok {
		return nil
	}
	return &UnknownVariantError{Registry: id, Variant: variant, Available: m.VariantNames()}
}

// UnknownVariantError is returned for a variant a registry does not
// declare. It matches [ErrUnknownVariant].
type UnknownVariantError struct {
	Registry  string   // the registry, "@main/services/go-service@1.0.0"
	Variant   string   // the variant asked for
	Available []string // the variants it declares, sorted
}

// Error names the variants the registry has: `@main/services/go-service@1.0.0
// has no variant "grpc"; its variants are: distroless (add one as
// @main/services/go-service:distroless)`.
func (e *UnknownVariantError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("%s has no variant %q; it has no variants at all: leave out the :%s suffix", e.Registry, e.Variant, e.Variant)
	}
	key := e.Registry
	if i := strings.LastIndexByte(key, '@'); i > 0 {
		key = key[:i]
	}
	return fmt.Sprintf("%s has no variant %q; its variants are: %s (as in %s:%s)", e.Registry, e.Variant, strings.Join(e.Available, ", "), key, e.Available[0])
}

// Unwrap returns [ErrUnknownVariant].
func (e *UnknownVariantError) Unwrap() error { return ErrUnknownVariant }

// variantViolations checks what the schema cannot: the number of
// variants, each name (length, and not a language), the targets of their
// files, and that defaultVariant names one of them.
func variantViolations(doc any) []Violation {
	top, _ := doc.(map[string]any)
	vs, _ := top["variants"].(map[string]any)
	var out []Violation
	if len(vs) > MaxVariants {
		return []Violation{{Pointer: "/variants", Message: fmt.Sprintf("%d variants, more than the %d allowed", len(vs), MaxVariants)}}
	}
	for _, name := range slices.Sorted(maps.Keys(vs)) {
		p := "/variants/" + pointer([]string{name})[1:]
		if !ValidVariant(name) {
			out = append(out, Violation{Pointer: p, Message: fmt.Sprintf("variant name %q must be lowercase kebab case ([a-z0-9] words joined by -), at most %d bytes, and not ts or js", name, MaxVariantName)})
			continue
		}
		blk, _ := vs[name].(map[string]any)
		out = append(out, fileTargetViolations(blk["files"], p)...)
	}
	if d, ok := top["defaultVariant"].(string); ok {
		if _, found := vs[d]; !found {
			out = append(out, Violation{Pointer: "/defaultVariant", Message: fmt.Sprintf("defaultVariant %q is not one of the registry's variants", d)})
		}
	}
	return out
}
