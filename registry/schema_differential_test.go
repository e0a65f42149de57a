package registry

// The differential tests hold our validator (internal/jsonschema) to the
// results of github.com/santhosh-tekuri/jsonschema/v6, which jig used
// before and which stays a test-only dependency: every document gets the
// same Violations (pointers, messages, order), the same ErrInvalidJSON
// text, the same depth error.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	lib "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// differentialSchemas are the schemas compared, with the function that
// validates against each today.
var differentialSchemas = []struct {
	name     string
	validate func([]byte) error
}{
	{ManifestSchemaFile, ValidateManifestJSON},
	{PresetSchemaFile, ValidatePresetJSON},
	{ProjectSchemaFile, ValidateProjectJSON},
	{LifecyclePlanSchemaFile, func(b []byte) error { return ValidateOutputJSON(LifecyclePlanSchemaFile, b) }},
	{CheckReportSchemaFile, func(b []byte) error { return ValidateOutputJSON(CheckReportSchemaFile, b) }},
	{OutdatedReportSchemaFile, func(b []byte) error { return ValidateOutputJSON(OutdatedReportSchemaFile, b) }},
	{DiffReportSchemaFile, func(b []byte) error { return ValidateOutputJSON(DiffReportSchemaFile, b) }},
}

// libSchemas compiles every embedded schema with the library, as the code
// before our validator did (format assertions on for the document
// schemas).
var libSchemas = sync.OnceValues(func() (map[string]*lib.Schema, error) {
	out := map[string]*lib.Schema{}
	for _, group := range []struct {
		names  []string
		format bool
	}{
		{[]string{ManifestSchemaFile, PresetSchemaFile, ProjectSchemaFile}, true},
		{outputSchemaNames, false},
	} {
		c := lib.NewCompiler()
		c.DefaultDraft(lib.Draft2020)
		if group.format {
			c.AssertFormat()
		}
		c.UseLoader(lib.SchemeURLLoader{})
		for _, n := range group.names {
			b, err := schemaFS.ReadFile("schemas/" + n)
			if err != nil {
				return nil, err
			}
			doc, err := lib.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			if err := c.AddResource(SchemaBaseURL+n, doc); err != nil {
				return nil, err
			}
		}
		for _, n := range group.names {
			s, err := c.Compile(SchemaBaseURL + n)
			if err != nil {
				return nil, err
			}
			out[n] = s
		}
	}
	return out, nil
})

// libValidate is validate as it was with the library.
func libValidate(t testing.TB, name string, data []byte) error {
	schemas, err := libSchemas()
	if err != nil {
		t.Fatal(err)
	}
	docName, ok := documentNames[name]
	if !ok {
		docName = name
	}
	if err := CheckJSONDepth(docName, data); err != nil {
		return &SchemaError{Schema: name, Violations: []Violation{{Message: err.Error()}}}
	}
	doc, err := lib.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	se := &SchemaError{Schema: name}
	err = schemas[name].Validate(doc)
	var ve *lib.ValidationError
	switch {
	case err == nil:
	case !errors.As(err, &ve):
		return fmt.Errorf("validating against %s: %w", name, err)
	default:
		canonicalize(ve, doc)
		libCollect(ve, &se.Violations)
		if len(se.Violations) == 0 {
			se.Violations = []Violation{{Pointer: pointer(ve.InstanceLocation), Message: libMessage(ve)}}
		}
	}
	var extra []Violation
	if name == ManifestSchemaFile {
		extra = targetViolations(doc)
	}
	return schemaError(name, se.Violations, extra)
}

// canonicalize takes out of the library's error tree the two orders it
// took from Go's map iteration, which changes from run to run: the
// errors under an object's properties come by property name, and the
// names of one "additional properties" error are sorted.
func canonicalize(e *lib.ValidationError, doc any) {
	for _, c := range e.Causes {
		canonicalize(c, doc)
	}
	if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		sort.Strings(k.Properties)
	}
	if _, ok := valueAt(doc, e.InstanceLocation).(map[string]any); !ok {
		return
	}
	n := len(e.InstanceLocation)
	var at []int
	var children []*lib.ValidationError
	for i, c := range e.Causes {
		if len(c.InstanceLocation) > n {
			at = append(at, i)
			children = append(children, c)
		}
	}
	sort.SliceStable(children, func(i, j int) bool { return children[i].InstanceLocation[n] < children[j].InstanceLocation[n] })
	for i, c := range children {
		e.Causes[at[i]] = c
	}
}

func valueAt(doc any, loc []string) any {
	for _, tok := range loc {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[tok]
		case []any:
			var i int
			fmt.Sscan(tok, &i)
			doc = v[i]
		}
	}
	return doc
}

// libCollect is collectViolations as it was with the library.
func libCollect(e *lib.ValidationError, out *[]Violation) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		var alts []string
		for _, c := range e.Causes {
			var sub []Violation
			libCollect(c, &sub)
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
		msg := libMessage(e)
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
		*out = append(*out, Violation{Pointer: pointer(e.InstanceLocation), Message: libMessage(e)})
		return
	}
	for _, c := range e.Causes {
		libCollect(c, out)
	}
}

var libPrinter = message.NewPrinter(language.English)

func libMessage(e *lib.ValidationError) string {
	if k, ok := e.ErrorKind.(*kind.Pattern); ok {
		if d, ok := patternDescriptions[k.Want]; ok {
			return fmt.Sprintf("%q %s", k.Got, d)
		}
	}
	return e.ErrorKind.LocalizedString(libPrinter)
}

// describe renders a Validate*JSON result for comparison: its kind and
// its full text.
func describe(err error) string {
	var se *SchemaError
	switch {
	case err == nil:
		return "valid"
	case errors.Is(err, ErrInvalidJSON):
		return "invalid JSON: " + err.Error()
	case errors.As(err, &se):
		var sb strings.Builder
		fmt.Fprintf(&sb, "schema error %s (%d violations):", se.Schema, len(se.Violations))
		for _, v := range se.Violations {
			fmt.Fprintf(&sb, "\n  %q: %q", v.Pointer, v.Message)
		}
		return sb.String()
	default:
		return "other error: " + err.Error()
	}
}

// checkSame fails t when data gets different results from the library and
// from our validator under any schema.
func checkSame(t testing.TB, data []byte) {
	t.Helper()
	for _, s := range differentialSchemas {
		want := describe(libValidate(t, s.name, data))
		got := describe(s.validate(data))
		if got != want {
			t.Errorf("%s: results differ for\n%s\nlibrary:\n%s\nours:\n%s", s.name, data, want, got)
		}
	}
}

// TestSchemaDifferential compares hand-written bad documents, and the
// valid ones they start from, under every schema.
func TestSchemaDifferential(t *testing.T) {
	t.Parallel()
	sum := `"sha256:` + strings.Repeat("ab", 32) + `"`
	docs := []struct{ name, doc string }{
		// not JSON, too deep, not objects
		{"empty", ``},
		{"truncated", `{"name":`},
		{"trailing data", `{} {}`},
		{"trailing bracket", `{}]`},
		{"trailing space", "{}\n\t "},
		{"nul", `nul`},
		{"too deep", strings.Repeat("[", 65) + strings.Repeat("]", 65)},
		{"deep but allowed", `{"name":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`},
		{"null", `null`},
		{"array", `["node"]`},
		{"string", `"x"`},
		{"number", `1.5`},
		{"true", `true`},
		{"empty object", `{}`},
		{"invalid utf-8", "{\"name\":\"\xff\xfe\"}"},
		// registry-item.json
		{"manifest minimal", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0}`},
		{"manifest every field wrong type", `{"$schema":1,"name":2,"namespace":3,"path":4,"type":5,"version":6,"priority":"7","description":8,
			"author":9,"license":10,"repository":11,"homepage":12,"tags":13,"conflicts":14,"registryDependencies":15,"dependencies":16,
			"devDependencies":17,"scripts":18,"files":19,"languages":20,"defaultLanguage":21}`},
		{"manifest null values", `{"name":null,"namespace":null,"type":null,"version":null,"priority":null,"files":[null],"languages":{"js":null}}`},
		{"manifest extra properties", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"zeta":1,"alpha":2,"mid'q":3,"x\ny":4}`},
		{"manifest bad patterns", `{"name":"A b","namespace":"main","path":"A/b","type":"registry:x","version":"v1","priority":-1,
			"tags":["",""],"conflicts":["@A/x","a@1","x:py"],"registryDependencies":["a@1.0.0","@main/A"],"defaultLanguage":"go"}`},
		{"manifest priority numbers", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-1234567.5}`},
		{"manifest priority fraction", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0.5}`},
		{"manifest priority 1.0", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":1.0}`},
		{"manifest priority 1e2", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":1e2}`},
		{"manifest priority -0", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-0}`},
		{"manifest priority -1e-400", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-1e-400}`},
		{"manifest priority -1e400", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-1e400}`},
		{"manifest priority -1e2000000", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-1e2000000}`},
		{"manifest priority big", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-123456789012345678901234567890}`},
		{"manifest priority -1000", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":-1000}`},
		{"manifest homepage", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"homepage":"not a uri"}`},
		{"manifest homepage bad escape", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"homepage":"http://x/%zz"}`},
		{"manifest homepage ipv6", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"homepage":"http://fe80::1/x"}`},
		{"manifest homepage ipv6 zone", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"homepage":"http://[fe80::1%25eth0]/x"}`},
		{"manifest homepage ipv6 bad", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"homepage":"http://[fe80::zz]/x"}`},
		{"manifest $schema relative", `{"$schema":"registry-item.json","name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0}`},
		{"manifest string maps", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,
			"dependencies":{"":"1","b":"","c":1,"\n":"x"},"devDependencies":[],"scripts":{"z":null,"a":""}}`},
		{"manifest files", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,"files":[
			{},
			{"target":"","type":"registry:lib","content":""},
			{"target":"../x","type":"registry:lib","path":"../y"},
			{"target":"/abs","type":"registry:x","path":"a/./b","content":1},
			{"target":"C:x","type":"registry:lib","path":".","mode":1},
			{"target":"a\\b","type":"registry:lib","path":"a//b"},
			{"target":".git/config","type":"registry:lib","content":"x","executable":"yes"},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{}},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{"type":"builtin","strategy":"yaml"}},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{"type":"custom"}},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{"type":"custom","script":"../m.js"}},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{"type":"custom","script":"m.js","strategy":"json"}},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{"type":1,"script":2,"strategy":3}},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":"json"},
			{"target":"x","type":"registry:lib","content":"x","mergeStrategy":{"type":"builtin","strategy":"json"}}
		]}`},
		{"manifest languages", `{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":0,
			"languages":{"py":{},"ts":{"files":[{"target":"..","type":"registry:lib"}],"scripts":{}},"js":{"dependencies":{"a":""},"files":{}}}}`},
		// preset.json
		{"preset valid", `{"name":"node","version":"1.0.0","registries":["@main/runtimes/node","build/x@1.0.0:ts"]}`},
		{"preset bad", `{"name":"Node","version":"1","registries":[],"tags":[1,""],"extends":"x","author":false}`},
		{"preset bad members", `{"name":"node","version":"1.0.0","registries":["A",1,null,"a@1","a:go"]}`},
		// jig.json
		{"project valid", `{"name":"x","language":"ts","items":["@main/a@1.0.0"],"installed":{"@main/a":{"version":"1.0.0","digest":` + sum + `,
			"files":{"a":` + sum + `},"package":{"scripts":{"t":"x"}},"conflicts":["a"]}}}`},
		{"project bad", `{"name":"","language":"go","template":1,"items":["x@"],"installed":{"a/b":{},"@main/a":{"version":"1","files":{"":"x","b":"md5:1"},
			"package":{"dependencies":{"a":1},"other":{}},"conflicts":[""],"digest":"sha256:AB","language":"py"},"@main/b":[]}}`},
		// outputs
		{"check report bad", `{"dir":1,"drift":"no","registries":[{"key":"k","version":"1","drift":false,"files":[{"target":"","status":"gone"}],
			"packages":[{"section":"x","name":"","recorded":"","status":"changed","extra":1}]}],"warnings":[1]}`},
		{"diff report bad", `{"dir":"d","updates":[{"key":"bad","from":"1","action":"jump"}],"files":[{"target":"a","action":"create"}],"conflicts":-1,"warnings":[]}`},
		{"lifecycle plan bad", `{"dir":"d","mode":"x","name":"n","registries":[{"id":"x"}],"files":[],"packages":[],"warnings":[],"roundTrips":1.5,
			"conflicts":0,"dryRun":true,"install":{"command":"npm i","status":"ok","error":1},"packageConflicts":[{"path":""}]}`},
		{"outdated report bad", `{"dir":"d","outdated":true,"registries":[{"key":"k"}],"x":1}`},
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			checkSame(t, []byte(d.doc))
		})
	}
	for _, seed := range schemaSeeds(t) {
		t.Run(filepath.Base(seed.name), func(t *testing.T) {
			t.Parallel()
			checkSame(t, seed.data)
		})
	}
}

type seedFile struct {
	name string
	data []byte
}

// schemaSeeds are the valid documents the differential tests start from:
// the starter catalog's manifests and presets, the schema test documents
// and the output examples.
func schemaSeeds(t testing.TB) []seedFile {
	var out []seedFile
	for _, pattern := range []string{
		filepath.Join("..", "registryserver", "catalog", "data", "*", "*", "*", "*", "registry.json"),
		filepath.Join("..", "registryserver", "catalog", "data", "presets", "*", "preset.json"),
		filepath.Join("testdata", "schema", "*.json"),
	} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, seedFile{f, b})
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d seed documents, want the catalog and testdata/schema", len(out))
	}
	return out
}

// FuzzSchemaDifferential mutates documents, byte by byte and (through ops)
// value by value, and requires the same result from the library and from
// our validator under every schema.
func FuzzSchemaDifferential(f *testing.F) {
	for _, s := range schemaSeeds(f) {
		f.Add(s.data, []byte{})
		f.Add(s.data, []byte{0, 1, 5, 2, 9, 3, 14, 4})
	}
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		checkSame(t, data)
		var doc any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if len(ops) == 0 || dec.Decode(&doc) != nil {
			return
		}
		doc = mutate(doc, ops)
		b, err := json.Marshal(doc)
		if err != nil {
			return
		}
		checkSame(t, b)
	})
}

// replacements are the values a mutation puts in place of another.
var replacements = []any{
	nil, true, "", "X Y", "../x", "a\nb", "@main/a@1.0.0:ts", "registry:asset", "sha256:00",
	json.Number("-1"), json.Number("1.5"), json.Number("-1e400"), json.Number("7"),
	[]any{}, []any{"a", json.Number("1")}, map[string]any{}, map[string]any{"type": "custom"},
}

// mutate applies ops, up to 16 pairs of (node, action) bytes, to doc: the node is
// picked among the values in document order (keys sorted), the action
// deletes it from its parent, replaces it, or adds a property or item.
func mutate(doc any, ops []byte) any {
	for i := 0; i+1 < len(ops) && i < 32; i += 2 {
		var nodes []*any
		var parents []any
		var keys []string
		var walk func(v *any, parent any, key string)
		walk = func(v *any, parent any, key string) {
			nodes, parents, keys = append(nodes, v), append(parents, parent), append(keys, key)
			switch c := (*v).(type) {
			case map[string]any:
				ks := make([]string, 0, len(c))
				for k := range c {
					ks = append(ks, k)
				}
				slices.Sort(ks)
				for _, k := range ks {
					val := c[k]
					walk(&val, c, k)
				}
			case []any:
				for j := range c {
					walk(&c[j], c, "")
				}
			}
		}
		walk(&doc, nil, "")
		n := int(ops[i]) % len(nodes)
		act := int(ops[i+1])
		node, parent, key := nodes[n], parents[n], keys[n]
		set := func(v any) {
			*node = v
			if m, ok := parent.(map[string]any); ok {
				m[key] = v
			}
		}
		switch {
		case act < len(replacements):
			set(replacements[act])
		case act == len(replacements):
			if m, ok := parent.(map[string]any); ok {
				delete(m, key)
			}
		case act == len(replacements)+1:
			switch c := (*node).(type) {
			case map[string]any:
				c["extra"] = json.Number("1")
			case []any:
				if len(c) < 16 {
					set(append(c, c...))
				}
			}
		case act == len(replacements)+2:
			if s, ok := (*node).(string); ok {
				set(strings.ToUpper(s) + "/..")
			}
		}
	}
	return doc
}
