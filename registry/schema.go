package registry

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jigkit/jig/internal/ident"
	"github.com/jigkit/jig/internal/jsonschema"
	"github.com/jigkit/jig/registry/layout"
)

// The file names of the embedded JSON Schemas, as served at /schemas/<name>.
const (
	ManifestSchemaFile = "registry-item.json"
	PresetSchemaFile   = layout.PresetFile // the schema of a preset.json
	ProjectSchemaFile  = "jig.json"
	// LegacyProjectSchemaFile is the reference tool's name for the project
	// schema; it is an alias of [ProjectSchemaFile].
	LegacyProjectSchemaFile = "rack.json"
)

// SchemaBaseURL is the prefix of the $id of every embedded schema.
const SchemaBaseURL = "https://jig.dev/schemas/"

// ErrInvalidJSON is wrapped by the Validate*JSON functions when the input is
// not a single well-formed JSON document.
var ErrInvalidJSON = errors.New("not valid JSON")

//go:embed schemas/*.json
var schemaFS embed.FS

// SchemaFile returns the embedded JSON Schema (draft 2020-12) named name:
// [ManifestSchemaFile], [PresetSchemaFile], [ProjectSchemaFile], or
// [LegacyProjectSchemaFile] (an alias of the project schema). It reports false for any other name. The returned slice is
// a fresh copy the caller may keep.
func SchemaFile(name string) ([]byte, bool) {
	if name == LegacyProjectSchemaFile {
		name = ProjectSchemaFile
	}
	switch name {
	case ManifestSchemaFile, PresetSchemaFile, ProjectSchemaFile:
	default:
		return nil, false
	}
	b, err := schemaFS.ReadFile("schemas/" + name)
	if err != nil {
		return nil, false
	}
	return b, true
}

// SchemaNames returns the names [SchemaFile] accepts, sorted.
func SchemaNames() []string {
	return []string{ProjectSchemaFile, PresetSchemaFile, LegacyProjectSchemaFile, ManifestSchemaFile}
}

// Violation is one place where a document breaks its schema.
type Violation struct {
	// Pointer is the JSON pointer (RFC 6901) of the offending value; ""
	// means the document itself.
	Pointer string `json:"pointer"`
	// Message says what is wrong there.
	Message string `json:"message"`
}

// String returns "<pointer>: <message>", with "/" standing for the root.
func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Message
}

// SchemaError is returned by [ValidateManifestJSON], [ValidatePresetJSON] and
// [ValidateProjectJSON] when a well-formed JSON document does not match its
// schema. It lists every violation found, sorted by pointer.
type SchemaError struct {
	// Schema is the schema file name, e.g. "registry-item.json".
	Schema string
	// Violations is never empty.
	Violations []Violation
}

func (e *SchemaError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return fmt.Sprintf("document does not match schema %s: %s", e.Schema, strings.Join(parts, "; "))
}

// compileSchema compiles one embedded schema (with the others loaded, for
// references between them). Each is compiled once, on first use, so a
// command that validates only manifests does not pay for the others.
func compileSchema(name string) (*jsonschema.Schema, error) {
	return compileEmbedded(name, []string{ManifestSchemaFile, PresetSchemaFile, ProjectSchemaFile})
}

// embeddedCompiler returns a compiler with the embedded schemas names
// loaded. Every $ref is local to them: nothing is fetched.
func embeddedCompiler(names []string) (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	for _, n := range names {
		b, err := schemaFS.ReadFile("schemas/" + n)
		if err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", n, err)
		}
		if err := c.AddResource(SchemaBaseURL+n, b); err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", n, err)
		}
	}
	return c, nil
}

// compileEmbedded compiles the embedded schema name with the embedded
// schemas names loaded.
func compileEmbedded(name string, names []string) (*jsonschema.Schema, error) {
	c, err := embeddedCompiler(names)
	if err != nil {
		return nil, err
	}
	s, err := c.Compile(SchemaBaseURL + name)
	if err != nil {
		return nil, fmt.Errorf("embedded schema %s: %w", name, err)
	}
	return s, nil
}

var (
	manifestSchema = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(ManifestSchemaFile) })
	presetSchema   = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(PresetSchemaFile) })
	projectSchema  = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(ProjectSchemaFile) })
)

// ValidateManifestJSON checks a registry.json document against the embedded
// registry-item schema, and every files[].target (top level and language
// blocks) with [CleanTarget], which also refuses what a regular expression
// cannot say well (targets inside git's .git directory). It returns nil when
// the document is valid, an error wrapping [ErrInvalidJSON] when it is not
// JSON, or a [*SchemaError] listing every violation. A document nested
// deeper than [MaxJSONDepth] is one violation at the root, found before the
// document is decoded.
func ValidateManifestJSON(data []byte) error {
	return validate(data, ManifestSchemaFile, manifestSchema, func(doc any) []Violation {
		return append(targetViolations(doc), migrationViolations(doc)...)
	})
}

// migrationViolations checks the migrations of a decoded manifest with
// [ValidateMigrations] once the schema found their shape right (a
// violation the schema reported already is not repeated).
func migrationViolations(doc any) []Violation {
	top, _ := doc.(map[string]any)
	raw, ok := top["migrations"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var ms []Migration
	if json.Unmarshal(b, &ms) != nil {
		return nil // the schema says what is wrong
	}
	version, _ := top["version"].(string)
	if err := ValidateMigrations(ms, version); err != nil {
		return []Violation{{Pointer: "/migrations", Message: strings.TrimPrefix(err.Error(), ErrInvalidMigration.Error()+": ")}}
	}
	return nil
}

// targetViolations checks every files[].target of a decoded manifest with
// [CleanTarget]; the schema has already reported targets that are not
// strings.
func targetViolations(doc any) []Violation {
	top, _ := doc.(map[string]any)
	out := fileTargetViolations(top["files"], "")
	langs, _ := top["languages"].(map[string]any)
	for _, l := range slices.Sorted(maps.Keys(langs)) {
		blk, _ := langs[l].(map[string]any)
		out = append(out, fileTargetViolations(blk["files"], "/languages/"+pointer([]string{l})[1:])...)
	}
	out = append(out, variantViolations(doc)...)
	// The sizes the schema cannot bound are checked with the targets.
	return append(out, boundViolations(doc)...)
}

// fileTargetViolations checks the target of each file of the decoded
// files list with [CleanTarget]; prefix is the list's block pointer.
func fileTargetViolations(files any, prefix string) []Violation {
	var out []Violation
	list, _ := files.([]any)
	for i, f := range list {
		obj, _ := f.(map[string]any)
		t, ok := obj["target"].(string)
		if !ok || t == "" {
			continue
		}
		if _, err := CleanTarget(t); err != nil {
			msg := strings.TrimPrefix(err.Error(), ErrUnsafePath.Error()+": ")
			out = append(out, Violation{Pointer: fmt.Sprintf("%s/files/%d/target", prefix, i), Message: msg})
		}
	}
	return out
}

// ValidatePresetJSON checks a preset.json document against the embedded
// preset schema, like [ValidateManifestJSON].
func ValidatePresetJSON(data []byte) error {
	return validate(data, PresetSchemaFile, presetSchema, nil)
}

// ValidateProjectJSON checks a jig.json document against the embedded
// project schema, like [ValidateManifestJSON].
func ValidateProjectJSON(data []byte) error {
	return validate(data, ProjectSchemaFile, projectSchema, nil)
}

// documentNames names the documents each schema describes, for messages.
var documentNames = map[string]string{
	ManifestSchemaFile: layout.ManifestFile,
	PresetSchemaFile:   layout.PresetFile,
	ProjectSchemaFile:  ProjectFile,
}

func validate(data []byte, name string, compiled func() (*jsonschema.Schema, error), extra func(doc any) []Violation) error {
	schema, err := compiled()
	if err != nil {
		return err
	}
	docName, ok := documentNames[name]
	if !ok {
		docName = name
	}
	if err := CheckJSONDepth(docName, data); err != nil {
		return &SchemaError{Schema: name, Violations: []Violation{{Message: err.Error()}}}
	}
	doc, err := jsonschema.Decode(data)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	var more []Violation
	if extra != nil {
		more = extra(doc)
	}
	return schemaError(name, violations(schema.Validate(doc)), more)
}

// schemaError returns the [*SchemaError] of the schema's violations and
// the extra checks' (an extra finding at a pointer the schema already
// reported is left out), sorted by pointer, or nil when there are none.
func schemaError(name string, found, extra []Violation) error {
	seen := map[string]bool{}
	for _, v := range found {
		seen[v.Pointer] = true
	}
	for _, v := range extra {
		if !seen[v.Pointer] {
			found = append(found, v)
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Pointer < found[j].Pointer })
	return &SchemaError{Schema: name, Violations: dedupeViolations(found)}
}

// violations turns the validator's errors into what a user reads, in the
// validator's order.
func violations(errs []*jsonschema.Error) []Violation {
	var out []Violation
	for _, e := range errs {
		out = append(out, Violation{Pointer: pointer(e.Location), Message: violationMessage(e)})
	}
	return out
}

// violationMessage is the message of one error: an anyOf/oneOf none of
// whose alternatives held is one line naming every alternative, a "not"
// (the schemas use it only to refuse paths that leave their root) says
// so, and a pattern says in words what it wants.
func violationMessage(e *jsonschema.Error) string {
	switch e.Keyword {
	case "anyOf", "oneOf":
		at := pointer(e.Location)
		var alts []string
		for _, errs := range e.Alternatives {
			var msgs []string
			for _, v := range violations(errs) {
				if v.Pointer != at {
					msgs = append(msgs, v.String())
				} else {
					msgs = append(msgs, v.Message)
				}
			}
			if len(msgs) > 0 {
				alts = append(alts, strings.Join(msgs, ", "))
			}
		}
		if len(alts) > 0 {
			return "must satisfy one of: " + strings.Join(alts, " | ")
		}
	case "not":
		return "path must be relative and must not contain . or .. segments (it would leave its root)"
	case "pattern":
		if d, ok := patternDescriptions[e.Pattern]; ok {
			return fmt.Sprintf("%q %s", e.Value, d)
		}
	}
	return e.Message
}

const (
	semverPattern = ident.VersionPattern
	nsPattern     = ident.NamespacePattern
	segPattern    = ident.SegmentPattern
	pathPattern   = segPattern + `(?:/` + segPattern + `)*`
)

// patternDescriptions turns the schemas' regular expressions into words a
// user can act on. Every "pattern" in the embedded schemas has an entry
// (checked by a test).
var patternDescriptions = map[string]string{
	"^" + semverPattern + "$":                             "is not a full SemVer version (e.g. 1.0.0 or 2.1.0-beta.1); ranges and tags are not allowed",
	"^" + nsPattern + "$":                                 "is not a namespace: @ followed by lowercase letters, digits, - or _ (e.g. @acme)",
	"^" + segPattern + "$":                                "is not lowercase kebab case (e.g. my-tool)",
	"^" + pathPattern + "$":                               "is not a registry path: lowercase kebab-case segments joined by / (e.g. quality/eslint)",
	"^(?:" + nsPattern + "/)?[a-z0-9-]+(?:/[a-z0-9-]+)*$": "is not a dependency identifier: [@namespace/]path without @version or :language (e.g. @main/runtimes/node)",
	"^(?:" + nsPattern + "/)?" + pathPattern + "(?:@" + semverPattern + ")?(?::(?:js|ts))?$": "is not a registry identifier: [@namespace/]path[@version][:ts|:js] (e.g. @main/quality/eslint@1.0.0)",
	`^(?:\./)?[A-Za-z0-9._@+-]+(?:/[A-Za-z0-9._@+-]+)*$`:                                     "is not a package file path: relative, / separated, segments of A-Z a-z 0-9 . _ @ + - only",
	"^sha256:[0-9a-f]{64}$": "is not a file digest of the form sha256:<64 lowercase hex digits>",
}

func dedupeViolations(vs []Violation) []Violation {
	out := vs[:0]
	for i, v := range vs {
		if i > 0 && v == vs[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}
