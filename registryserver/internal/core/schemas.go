package core

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

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// ErrNoSchemaFile is a schema file that the schema directory or the
// storage does not have.
var ErrNoSchemaFile = errors.New("no such schema file")

// SchemaState is the operator's registry-item.json as last compiled.
type SchemaState struct {
	Dir string // registryserver.WithSchemaDir, "" for the storage

	mu     sync.Mutex
	digest [sha256.Size]byte
	schema *registry.OperatorSchema
	err    error
}

// LogSchemaDir warns when the schema directory does not exist.
func (h *Core) LogSchemaDir() {
	dir := h.Schemas.Dir
	if dir == "" {
		return
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		h.Log.Warn("SCHEMA_DIR does not exist or is not a directory: serving and enforcing the built-in schemas",
			zap.String("schema_dir", dir))
	}
}

// ReadSchemaFile reads the operator's copy of schema file name (one of
// [registry.SchemaNames]): from the schema directory, else from the
// storage. ErrNoSchemaFile means there is none. info is the storage's for
// a stored file and zero for one in the schema directory.
func (h *Core) ReadSchemaFile(ctx context.Context, name string) ([]byte, storage.Info, string, error) {
	if dir := h.Schemas.Dir; dir != "" {
		p := filepath.Join(dir, name)
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, storage.Info{}, "", ErrNoSchemaFile
		}
		if err != nil {
			return nil, storage.Info{}, "", err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, MaxDocumentSize+1))
		if err != nil {
			return nil, storage.Info{}, "", err
		}
		if len(data) > MaxDocumentSize {
			return nil, storage.Info{}, "", &TooLargeError{Key: p, Limit: MaxDocumentSize}
		}
		return data, storage.Info{}, "", nil
	}
	key := layout.Schema(name)
	data, info, err := h.ReadDocument(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, storage.Info{}, "", ErrNoSchemaFile
	}
	return data, info, key, err
}

// CheckOperatorSchema checks manifest, an upload's registry.json that the
// embedded schema accepted, against the operator's registry-item.json when
// there is one: a violation is 400 SCHEMA_VALIDATION_FAILED, as the
// reference answers; a schema that cannot be read or compiled is a 500
// (the reference's too) whose cause is logged.
func (h *Core) CheckOperatorSchema(ctx context.Context, manifest []byte) error {
	data, _, _, err := h.ReadSchemaFile(ctx, registry.ManifestSchemaFile)
	if errors.Is(err, ErrNoSchemaFile) {
		return nil
	}
	if err != nil {
		return InternalError(fmt.Errorf("reading the registry-item.json schema: %w", err))
	}
	if embedded, _ := registry.SchemaFile(registry.ManifestSchemaFile); bytes.Equal(data, embedded) {
		return nil // already checked
	}
	s, err := h.Schemas.compiled(data)
	if err != nil {
		return InternalError(fmt.Errorf("the operator's registry-item.json schema: %w", err))
	}
	err = s.Validate(manifest)
	if se, ok := errors.AsType[*registry.SchemaError](err); ok {
		msgs := make([]string, len(se.Violations))
		for i, v := range se.Violations {
			msgs[i] = v.String()
		}
		return NewAPIError(wire.CodeSchemaValidation, "Schema validation failed: "+strings.Join(msgs, "; "))
	}
	if errors.Is(err, registry.ErrInvalidJSON) {
		return NewAPIError(wire.CodeUploadFailed, "registry.json is not valid JSON")
	}
	if err != nil {
		return InternalError(err)
	}
	return nil
}

// compiled returns data compiled, from the last compile when data has not
// changed. The compile is bounded: at most [registry.MaxOperatorSchemaSize] bytes
// and [registry.MaxJSONDepth] levels, and a "$ref" outside the document
// fails instead of fetching anything (files or URLs).
func (s *SchemaState) compiled(data []byte) (*registry.OperatorSchema, error) {
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
