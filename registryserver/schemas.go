package registryserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	lib "github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// WithSchemaDir serves the JSON Schemas (GET /schemas/<file>) from the
// files of dir, and checks every upload's registry.json against dir's
// registry-item.json, as the reference's SCHEMA_DIR does. A file dir lacks
// is served from the embedded schemas (and then only the embedded
// manifest schema is enforced); a dir that does not exist is logged as a
// warning by [New]. The default is "": the storage's own schema/<file>
// ([layout.Schema]; the reference's default SCHEMA_DIR is
// <STORAGE_ROOT>/schema), else the embedded schema.
func WithSchemaDir(dir string) Option {
	return func(o *options) error {
		o.schemaDir = dir
		return nil
	}
}

// maxOperatorSchemaSize bounds a schema an operator supplies: a larger one
// is not compiled (and uploads are refused with 500 until it is fixed).
const maxOperatorSchemaSize = 1 << 20

// errNoSchemaFile is a schema file that the schema directory or the
// storage does not have.
var errNoSchemaFile = errors.New("no such schema file")

// schemaState is the operator's registry-item.json as last compiled.
type schemaState struct {
	dir string // WithSchemaDir, "" for the storage

	mu     sync.Mutex
	digest [sha256.Size]byte
	schema *lib.Schema
	err    error
}

// logSchemaDir warns when the schema directory does not exist.
func (h *Handler) logSchemaDir() {
	dir := h.schemas.dir
	if dir == "" {
		return
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		h.log.Warn("SCHEMA_DIR does not exist or is not a directory: serving and enforcing the built-in schemas",
			zap.String("schema_dir", dir))
	}
}

// readSchemaFile reads the operator's copy of schema file name (one of
// [registry.SchemaNames]): from the schema directory, else from the
// storage. errNoSchemaFile means there is none. info is the storage's for
// a stored file and zero for one in the schema directory.
func (h *Handler) readSchemaFile(ctx context.Context, name string) ([]byte, storage.Info, string, error) {
	if dir := h.schemas.dir; dir != "" {
		p := filepath.Join(dir, name)
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, storage.Info{}, "", errNoSchemaFile
		}
		if err != nil {
			return nil, storage.Info{}, "", err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxDocumentSize+1))
		if err != nil {
			return nil, storage.Info{}, "", err
		}
		if len(data) > maxDocumentSize {
			return nil, storage.Info{}, "", fmt.Errorf("%s: %w (over %d bytes)", p, errTooLarge, maxDocumentSize)
		}
		return data, storage.Info{}, "", nil
	}
	key := layout.Schema(name)
	data, info, err := h.readDocument(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, storage.Info{}, "", errNoSchemaFile
	}
	return data, info, key, err
}

// checkOperatorSchema checks manifest, an upload's registry.json that the
// embedded schema accepted, against the operator's registry-item.json when
// there is one: a violation is 400 SCHEMA_VALIDATION_FAILED, as the
// reference answers; a schema that cannot be read or compiled is a 500
// (the reference's too) whose cause is logged.
func (h *Handler) checkOperatorSchema(ctx context.Context, manifest []byte) error {
	data, _, _, err := h.readSchemaFile(ctx, registry.ManifestSchemaFile)
	if errors.Is(err, errNoSchemaFile) {
		return nil
	}
	if err != nil {
		return internalError(fmt.Errorf("reading the registry-item.json schema: %w", err))
	}
	if embedded, _ := registry.SchemaFile(registry.ManifestSchemaFile); bytes.Equal(data, embedded) {
		return nil // already checked
	}
	s, err := h.schemas.compiled(data)
	if err != nil {
		return internalError(fmt.Errorf("the operator's registry-item.json schema: %w", err))
	}
	doc, err := lib.UnmarshalJSON(bytes.NewReader(manifest))
	if err != nil {
		return newAPIError(wire.CodeUploadFailed, "registry.json is not valid JSON")
	}
	err = s.Validate(doc)
	if ve, ok := errors.AsType[*lib.ValidationError](err); ok {
		return newAPIError(wire.CodeSchemaValidation, "Schema validation failed: "+schemaViolations(ve))
	}
	if err != nil {
		return internalError(err)
	}
	return nil
}

// schemaViolations lists the leaf errors of ve, "<pointer>: <message>",
// joined with "; ".
func schemaViolations(ve *lib.ValidationError) string {
	var out []string
	var walk func(u lib.OutputUnit)
	walk = func(u lib.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			at := u.InstanceLocation
			if at == "" {
				at = "/"
			}
			out = append(out, at+": "+u.Error.String())
		}
		for _, e := range u.Errors {
			walk(e)
		}
	}
	walk(*ve.BasicOutput())
	if len(out) == 0 {
		return ve.Error()
	}
	return strings.Join(out, "; ")
}

// compiled returns data compiled, from the last compile when data has not
// changed. The compile is bounded: at most [maxOperatorSchemaSize] bytes
// and [registry.MaxJSONDepth] levels, and a "$ref" outside the document
// fails instead of fetching anything (files or URLs).
func (s *schemaState) compiled(data []byte) (*lib.Schema, error) {
	d := sha256.Sum256(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if d == s.digest && (s.schema != nil || s.err != nil) {
		return s.schema, s.err
	}
	s.digest = d
	s.schema, s.err = compileOperatorSchema(data)
	return s.schema, s.err
}

// operatorSchemaURL is the URL an operator's schema is compiled under (its
// own "$id", if any, takes over inside it).
const operatorSchemaURL = "https://jig-server.invalid/schemas/registry-item.json"

func compileOperatorSchema(data []byte) (*lib.Schema, error) {
	if len(data) > maxOperatorSchemaSize {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", len(data), maxOperatorSchemaSize)
	}
	if err := registry.CheckJSONDepth(registry.ManifestSchemaFile, data); err != nil {
		return nil, err
	}
	doc, err := lib.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	c := lib.NewCompiler()
	c.UseLoader(noLoader{})
	c.AssertFormat()
	if err := c.AddResource(operatorSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(operatorSchemaURL)
}

// noLoader refuses every schema a "$ref" names outside the document: the
// server fetches nothing on an operator schema's behalf.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref to %s: an operator schema may refer only to itself and the JSON Schema meta-schemas; nothing is fetched", url)
}
