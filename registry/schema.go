package registry

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The file names of the embedded JSON Schemas, as served at /schemas/<name>.
const (
	ManifestSchemaFile = "registry-item.json"
	PresetSchemaFile   = "preset.json"
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
// "registry-item.json", "preset.json", "jig.json", or "rack.json" (an alias
// of "jig.json"). It reports false for any other name. The returned slice is
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
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	// Never fetch anything: every $ref is local to the embedded documents.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	for _, n := range []string{ManifestSchemaFile, PresetSchemaFile, ProjectSchemaFile} {
		b, _ := SchemaFile(n)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", n, err)
		}
		if err := c.AddResource(SchemaBaseURL+n, doc); err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", n, err)
		}
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
// registry-item schema. It returns nil when the document is valid, an error
// wrapping [ErrInvalidJSON] when it is not JSON, or a [*SchemaError] listing
// every violation.
func ValidateManifestJSON(data []byte) error {
	return validate(data, ManifestSchemaFile, manifestSchema)
}

// ValidatePresetJSON checks a preset.json document against the embedded
// preset schema, like [ValidateManifestJSON].
func ValidatePresetJSON(data []byte) error {
	return validate(data, PresetSchemaFile, presetSchema)
}

// ValidateProjectJSON checks a jig.json document against the embedded
// project schema, like [ValidateManifestJSON].
func ValidateProjectJSON(data []byte) error {
	return validate(data, ProjectSchemaFile, projectSchema)
}

func validate(data []byte, name string, compiled func() (*jsonschema.Schema, error)) error {
	schema, err := compiled()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	err = schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("validating against %s: %w", name, err)
	}
	se := &SchemaError{Schema: name}
	collectViolations(ve, &se.Violations)
	if len(se.Violations) == 0 {
		se.Violations = []Violation{{Pointer: pointer(ve.InstanceLocation), Message: violationMessage(ve)}}
	}
	sort.SliceStable(se.Violations, func(i, j int) bool { return se.Violations[i].Pointer < se.Violations[j].Pointer })
	se.Violations = dedupeViolations(se.Violations)
	return se
}

// collectViolations flattens the error tree to its leaves: the wrappers
// ("doesn't validate with ...", allOf, $ref) say nothing a user can act on.
func collectViolations(e *jsonschema.ValidationError, out *[]Violation) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		// "one of these must hold": one line naming every alternative.
		var alts []string
		for _, c := range e.Causes {
			var sub []Violation
			collectViolations(c, &sub)
			var msgs []string
			for _, v := range sub {
				if v.Pointer != pointer(e.InstanceLocation) {
					msgs = append(msgs, v.String())
				} else {
					msgs = append(msgs, v.Message)
				}
			}
			if len(msgs) > 0 {
				alts = append(alts, strings.Join(msgs, ", "))
			}
		}
		msg := violationMessage(e)
		if len(alts) > 0 {
			msg = "must satisfy one of: " + strings.Join(alts, " | ")
		}
		*out = append(*out, Violation{Pointer: pointer(e.InstanceLocation), Message: msg})
		return
	case *kind.Not:
		*out = append(*out, Violation{Pointer: pointer(e.InstanceLocation),
			Message: "path must be relative and must not contain . or .. segments (it would leave its root)"})
		return
	}
	if len(e.Causes) == 0 {
		switch e.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference:
			return
		}
		*out = append(*out, Violation{Pointer: pointer(e.InstanceLocation), Message: violationMessage(e)})
		return
	}
	for _, c := range e.Causes {
		collectViolations(c, out)
	}
}

// printer renders the library's messages in English.
var printer = message.NewPrinter(language.English)

func violationMessage(e *jsonschema.ValidationError) string {
	if k, ok := e.ErrorKind.(*kind.Pattern); ok {
		if d, ok := patternDescriptions[k.Want]; ok {
			return fmt.Sprintf("%q %s", k.Got, d)
		}
	}
	return e.ErrorKind.LocalizedString(printer)
}

const (
	semverPattern = `(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-(?:(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?`
	nsPattern     = `@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?`
	segPattern    = `[a-z0-9]+(?:-[a-z0-9]+)*`
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
