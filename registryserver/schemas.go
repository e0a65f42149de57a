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

	"github.com/jigkit/jig/registryserver/internal/core"

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

// errNoSchemaFile is a schema file that the schema directory or the
// storage does not have.
var errNoSchemaFile = errors.New("no such schema file")

// schemaState is the operator's registry-item.json as last compiled.
type schemaState struct {
	dir string // WithSchemaDir, "" for the storage

	mu     sync.Mutex
	digest [sha256.Size]byte
	schema *registry.OperatorSchema
	err    error
}

// logSchemaDir warns when the schema directory does not exist.
func (h *Handler) logSchemaDir() {
	dir := h.schemas.dir
	if dir == "" {
		return
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		h.Log.Warn("SCHEMA_DIR does not exist or is not a directory: serving and enforcing the built-in schemas",
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
		data, err := io.ReadAll(io.LimitReader(f, core.MaxDocumentSize+1))
		if err != nil {
			return nil, storage.Info{}, "", err
		}
		if len(data) > core.MaxDocumentSize {
			return nil, storage.Info{}, "", &core.TooLargeError{Key: p, Limit: core.MaxDocumentSize}
		}
		return data, storage.Info{}, "", nil
	}
	key := layout.Schema(name)
	data, info, err := h.ReadDocument(ctx, key)
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
		return core.InternalError(fmt.Errorf("reading the registry-item.json schema: %w", err))
	}
	if embedded, _ := registry.SchemaFile(registry.ManifestSchemaFile); bytes.Equal(data, embedded) {
		return nil // already checked
	}
	s, err := h.schemas.compiled(data)
	if err != nil {
		return core.InternalError(fmt.Errorf("the operator's registry-item.json schema: %w", err))
	}
	err = s.Validate(manifest)
	if se, ok := errors.AsType[*registry.SchemaError](err); ok {
		msgs := make([]string, len(se.Violations))
		for i, v := range se.Violations {
			msgs[i] = v.String()
		}
		return core.NewAPIError(wire.CodeSchemaValidation, "Schema validation failed: "+strings.Join(msgs, "; "))
	}
	if errors.Is(err, registry.ErrInvalidJSON) {
		return core.NewAPIError(wire.CodeUploadFailed, "registry.json is not valid JSON")
	}
	if err != nil {
		return core.InternalError(err)
	}
	return nil
}

// compiled returns data compiled, from the last compile when data has not
// changed. The compile is bounded: at most [registry.MaxOperatorSchemaSize] bytes
// and [registry.MaxJSONDepth] levels, and a "$ref" outside the document
// fails instead of fetching anything (files or URLs).
func (s *schemaState) compiled(data []byte) (*registry.OperatorSchema, error) {
	d := sha256.Sum256(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if d == s.digest && (s.schema != nil || s.err != nil) {
		return s.schema, s.err
	}
	s.digest = d
	s.schema, s.err = registry.CompileOperatorSchema(registry.ManifestSchemaFile, data)
	return s.schema, s.err
}
