package registry

import (
	"fmt"
	"sync"

	"github.com/jigkit/jig/internal/jsonschema"
)

// The embedded JSON Schemas (draft 2020-12) of the documents the lifecycle
// commands print with --json, for tools that consume them.
const (
	// LifecyclePlanSchemaFile describes "jig update" and "jig remove"
	// with --json and --dry-run --json.
	LifecyclePlanSchemaFile = "lifecycle-plan.json"
	// CheckReportSchemaFile describes "jig check --json".
	CheckReportSchemaFile = "check-report.json"
	// OutdatedReportSchemaFile describes "jig outdated --json".
	OutdatedReportSchemaFile = "outdated-report.json"
	// DiffReportSchemaFile describes "jig diff --json".
	DiffReportSchemaFile = "diff-report.json"
)

var outputSchemaNames = []string{LifecyclePlanSchemaFile, CheckReportSchemaFile, OutdatedReportSchemaFile, DiffReportSchemaFile}

// OutputSchemaFile returns the embedded schema of a command's --json
// document (one of the *SchemaFile constants above), or false.
func OutputSchemaFile(name string) ([]byte, bool) {
	for _, n := range outputSchemaNames {
		if n == name {
			b, err := schemaFS.ReadFile("schemas/" + name)
			return b, err == nil
		}
	}
	return nil, false
}

var compiledOutputs = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c, err := embeddedCompiler(outputSchemaNames)
	if err != nil {
		return nil, err
	}
	out := map[string]*jsonschema.Schema{}
	for _, n := range outputSchemaNames {
		s, err := c.Compile(SchemaBaseURL + n)
		if err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", n, err)
		}
		out[n] = s
	}
	return out, nil
})

// ValidateOutputJSON checks a --json document against the output schema
// name. It returns nil when the document is valid, an error wrapping
// [ErrInvalidJSON] when it is not JSON, or a [*SchemaError] listing the
// violations.
func ValidateOutputJSON(name string, data []byte) error {
	schemas, err := compiledOutputs()
	if err != nil {
		return err
	}
	s, ok := schemas[name]
	if !ok {
		return fmt.Errorf("no output schema %q", name)
	}
	return validate(data, name, func() (*jsonschema.Schema, error) { return s, nil }, nil)
}
