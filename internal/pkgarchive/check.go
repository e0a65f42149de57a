package pkgarchive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// Refusal is why a registry package cannot be published: the wire code
// and message jig-server answers with (its status is the code's,
// [wire.Code.Status]). jig publish reports the same message before it
// uploads anything.
type Refusal struct {
	Code    wire.Code
	Message string
	cause   error
}

// Error returns the message.
func (r *Refusal) Error() string { return r.Message }

// Unwrap returns the cause (an [*Error] for INVALID_ARCHIVE), if any.
func (r *Refusal) Unwrap() error { return r.cause }

func refuse(code wire.Code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// TooLarge is the refusal of an archive of more than limit bytes.
func TooLarge(limit int64) *Refusal {
	return refuse(wire.CodePayloadTooLarge, "Upload exceeds the limit of %d MiB", limit>>20)
}

// PresetTooLarge is the refusal of a preset.json of more than
// [MaxPresetSize] bytes.
func PresetTooLarge() *Refusal {
	return refuse(wire.CodePayloadTooLarge, "preset.json exceeds %d KiB", MaxPresetSize>>10)
}

// ArchiveRefusal turns an error of [Scan] or [Walk] about the archive (one
// wrapping [ErrInvalidArchive]) into its INVALID_ARCHIVE refusal; any
// other error is returned as it is.
func ArchiveRefusal(err error) error {
	if err == nil || !errors.Is(err, ErrInvalidArchive) {
		return err
	}
	return &Refusal{Code: wire.CodeInvalidArchive, Message: "Uploaded file is not a valid tar.gz archive: " + err.Error(), cause: err}
}

// Head is what registry.json must say before anything else is checked:
// enough to decide who may publish the package (REFERENCE.md 2.4 step 6).
type Head struct {
	Namespace string
	Name      string
	Version   string
	// Path is the explicit storage path, "" when there is none.
	Path string
}

// Head checks that the archive has a registry.json at its root and that
// it names a namespace, a name and a version (and an explicit path ending
// with the name). The error is a [*Refusal].
func (ix *Index) Head() (Head, error) {
	if ix.Manifest == nil {
		for _, u := range ix.Unsafe {
			if u.Name == layout.ManifestFile {
				return Head{}, refuse(wire.CodeUnsafeFile, "registry.json must be a regular file, not a %s", u.Kind)
			}
		}
		return Head{}, refuse(wire.CodeUploadFailed,
			"registry.json not found in package (it must be at the archive root: pack from inside the registry directory)")
	}
	var raw map[string]any
	if err := json.Unmarshal(ix.Manifest, &raw); err != nil {
		return Head{}, refuse(wire.CodeUploadFailed, "registry.json is not valid JSON")
	}
	var h Head
	for _, f := range []struct {
		name string
		dst  *string
	}{{"namespace", &h.Namespace}, {"name", &h.Name}, {"version", &h.Version}} {
		s, ok := raw[f.name].(string)
		if !ok || s == "" {
			return h, refuse(wire.CodeUploadFailed, "%s is required in registry.json", f.name)
		}
		*f.dst = s
	}
	if p, ok := raw["path"].(string); ok && p != "" {
		h.Path = p
		if last := p[strings.LastIndexByte(p, '/')+1:]; last != h.Name {
			return h, refuse(wire.CodeUploadFailed, "path %q must end with name %q", p, h.Name)
		}
	}
	return h, nil
}

// Contents is a package whose contents passed [Index.Check].
type Contents struct {
	Manifest *registry.Manifest
	// Segments are the storage path segments ("features", "ui-kit").
	Segments []string
	// Declared are the files registry.json declares, registry.json
	// excluded; they are exactly the archive's other regular files.
	Declared map[string]bool
}

// Check checks what the package contains, after [Index.Head]: registry.json
// passes the registry-item schema, every file it declares is a regular
// file of the archive, and the archive holds nothing else (no links,
// devices or undeclared files). The error is a [*Refusal], or an
// unexpected failure of the schema validator.
func (ix *Index) Check() (*Contents, error) {
	if err := registry.ValidateManifestJSON(ix.Manifest); err != nil {
		return nil, SchemaRefusal(err)
	}
	m, err := registry.ParseManifest(ix.Manifest)
	if err != nil {
		return nil, refuse(wire.CodeUploadFailed, "%s", err)
	}
	segs, err := m.StorageSegments()
	if err != nil {
		return nil, refuse(wire.CodeUploadFailed, "%s", err)
	}
	declared := map[string]bool{}
	for _, p := range m.FilePaths() {
		if _, ok := ix.Files[p]; !ok || !registry.ValidFilePath(p) || p == layout.ManifestFile {
			return nil, refuse(wire.CodeFileNotFound, "File referenced in registry.json is missing or not a regular file: %s", p)
		}
		if layout.Reserved(p) {
			return nil, refuse(wire.CodeUnsafeFile,
				"Package declares %s, a name jig-server reserves for the version's digest index and signatures; rename the file", p)
		}
		declared[p] = true
	}
	if len(ix.Unsafe) > 0 {
		u := ix.Unsafe[0]
		return nil, refuse(wire.CodeUnsafeFile,
			"Package contains an unsafe file (%s): %s. Only regular files and directories are allowed.", u.Kind, u.Name)
	}
	for _, name := range ix.Names() {
		if name != layout.ManifestFile && !declared[name] {
			return nil, refuse(wire.CodeUndeclaredFile, "Package contains a file not declared in registry.json: %s", name)
		}
	}
	return &Contents{Manifest: m, Segments: segs, Declared: declared}, nil
}

// SchemaRefusal maps a failed schema validation of registry.json or
// preset.json to SCHEMA_VALIDATION_FAILED with every violation in the
// message (UPLOAD_FAILED for a document that is not JSON). Other errors
// are returned as they are.
func SchemaRefusal(err error) error {
	if se, ok := errors.AsType[*registry.SchemaError](err); ok {
		parts := make([]string, len(se.Violations))
		for i, v := range se.Violations {
			parts[i] = v.String()
		}
		return refuse(wire.CodeSchemaValidation, "Schema validation failed: %s", strings.Join(parts, "; "))
	}
	if errors.Is(err, registry.ErrInvalidJSON) {
		return refuse(wire.CodeUploadFailed, "document is not valid JSON")
	}
	return err
}

// Inspect reads a whole package archive and runs every check jig-server
// runs on an upload (except who may publish it): the size limit, [Scan],
// [Index.Head] and [Index.Check]. A refused package gives a [*Refusal].
func Inspect(data []byte, lim Limits) (*Index, *Contents, error) {
	ix, c, _, err := inspect(data, lim, false)
	return ix, c, err
}

// InspectFiles is [Inspect] that also returns the content of every file
// of the package but registry.json (whose content is the index's
// Manifest), by name, read in the same pass over the archive: jig publish
// compares them with the previous version's.
func InspectFiles(data []byte, lim Limits) (*Index, *Contents, map[string][]byte, error) {
	return inspect(data, lim, true)
}

func inspect(data []byte, lim Limits, keep bool) (*Index, *Contents, map[string][]byte, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxUpload {
		return nil, nil, nil, TooLarge(lim.MaxUpload)
	}
	ix, files, err := scan(bytes.NewReader(data), lim, keep)
	if err != nil {
		return nil, nil, nil, ArchiveRefusal(err)
	}
	if _, err := ix.Head(); err != nil {
		return ix, nil, nil, err
	}
	c, err := ix.Check()
	if err != nil {
		return ix, nil, nil, err
	}
	return ix, c, files, nil
}
