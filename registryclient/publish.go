package registryclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// PublishTimeout bounds one upload, whatever the client's timeout.
const PublishTimeout = 10 * time.Minute

// ErrInvalidPackage is wrapped by every error about a package that cannot
// be published as it is (checked before anything is sent).
var ErrInvalidPackage = pkgarchive.ErrInvalidPackage

// Package is a registry or a preset ready to publish, as [OpenPackage]
// reads it.
type Package struct {
	// Manifest is the registry's registry.json; nil for a preset.
	Manifest *registry.Manifest
	// Preset is the preset; nil for a registry.
	Preset *registry.Preset
	// Data is the .tar.gz archive of a registry, or the preset.json
	// document of a preset.
	Data []byte
	// Checksum is the lowercase hex SHA-256 of Data.
	Checksum string
	// Files are the archive's regular files, registry.json first (nil for
	// a preset).
	Files []string
	// Digests is the version's canonical digest index, the bytes the
	// server will serve at GET .../<version>/digests and what a
	// signature signs (registry/signing.Sign); nil for a preset.
	Digests []byte
	// Signatures are armored SSH signatures over Digests that
	// [Client.PublishPackage] uploads with a registry (as
	// [wire.FormSignature] fields, at most [wire.MaxSignatures]); the
	// server refuses the upload if one does not verify. OpenPackage leaves
	// it empty; append what registry/signing.Sign or ssh-keygen -Y sign
	// made.
	Signatures [][]byte

	// read is what OpenPackage read from the archive in Data, so that
	// [Package.Release] need not read it again.
	read *readPackage
}

// readPackage is the content of a package's archive as [OpenPackage]
// read it.
type readPackage struct {
	// data is the archive the files were read from: they are the
	// package's only while Data is that archive.
	data []byte
	// raw is registry.json as packed; files are the other files, by name.
	raw   []byte
	files map[string][]byte
}

// Namespace returns the namespace the package is published to: the
// manifest's, or [registry.PresetNamespace] for a preset.
func (p *Package) Namespace() string {
	if p.Preset != nil {
		return registry.PresetNamespace
	}
	return p.Manifest.Namespace
}

// ID returns what the package publishes, e.g. "@acme/features/ui-kit@1.0.0"
// or "@presets/web@1.0.0".
func (p *Package) ID() string {
	if p.Preset != nil {
		return registry.PresetNamespace + "/" + p.Preset.Name + "@" + p.Preset.Version
	}
	if id, err := p.Manifest.ID(); err == nil {
		return id.String()
	}
	return p.Manifest.Namespace + "/" + p.Manifest.Name + "@" + p.Manifest.Version
}

// OpenPackage reads what src names and runs the checks jig-server runs
// on an upload (except who may publish it), so that a package the server
// would refuse is refused, with the server's message, before anything is
// uploaded:
//
//   - a directory with a registry.json: packed as the server wants it
//     (registry.json and the files it declares, deterministically);
//   - a directory with a preset.json, or a .json file: a preset;
//   - any other file: a .tar.gz registry package, sent as it is.
//
// The error wraps [ErrInvalidPackage]; for a registry package refused as
// the server would refuse it, the message is the server's.
func OpenPackage(src string) (*Package, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	var data []byte
	switch {
	case fi.IsDir():
		if _, err := os.Stat(filepath.Join(src, layout.ManifestFile)); err == nil {
			if data, _, _, err = pkgarchive.PackBytes(src); err != nil {
				return nil, err
			}
			break
		}
		if _, err := os.Stat(filepath.Join(src, layout.PresetFile)); err == nil {
			return openPreset(filepath.Join(src, layout.PresetFile))
		}
		return nil, fmt.Errorf("%w: %s has neither a registry.json nor a preset.json", ErrInvalidPackage, src)
	case strings.HasSuffix(strings.ToLower(src), ".json"):
		return openPreset(src)
	case fi.Size() > pkgarchive.DefaultMaxUpload:
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, src, pkgarchive.TooLarge(pkgarchive.DefaultMaxUpload))
	default:
		if data, err = safefile.ReadFile(src, pkgarchive.DefaultMaxUpload); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
		}
	}
	ix, contents, packed, err := pkgarchive.InspectFiles(data, pkgarchive.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, src, err)
	}
	files := []string{layout.ManifestFile}
	for _, n := range ix.Names() {
		if n != layout.ManifestFile {
			files = append(files, n)
		}
	}
	idx, err := ix.DigestIndex(contents)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, src, err)
	}
	digests, err := idx.Marshal()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &Package{Manifest: contents.Manifest, Data: data, Checksum: hex.EncodeToString(sum[:]), Files: files, Digests: digests,
		read: &readPackage{data: data, raw: ix.Manifest, files: packed}}, nil
}

func openPreset(file string) (*Package, error) {
	f, _, err := safefile.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	defer f.Close()
	data, err := pkgarchive.ReadPreset(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, file, err)
	}
	if err := registry.ValidatePresetJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, file, err)
	}
	p, err := registry.ParsePreset(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, file, err)
	}
	sum := sha256.Sum256(data)
	return &Package{Preset: p, Data: data, Checksum: hex.EncodeToString(sum[:])}, nil
}

// PublishResult is the server's answer to a publish ([wire.UploadResult])
// and where the new version is served.
type PublishResult struct {
	wire.UploadResult
	// URL is where the new version is served: its versioned manifest, or
	// the preset.
	URL string `json:"url"`
}

// Publish reads src with [OpenPackage] and publishes it with
// [Client.PublishPackage].
//
// API: POST /registries (or POST /presets for a preset)
func (c *Client) Publish(ctx context.Context, src string) (*PublishResult, error) {
	p, err := OpenPackage(src)
	if err != nil {
		return nil, err
	}
	return c.PublishPackage(ctx, p)
}

// PublishPackage uploads p with the client's credentials: a registry as a
// multipart form with its checksum and [Package.Signatures], a preset as
// its JSON document (which
// needs the server's admin token). A refusal is a [*StatusError] whose
// Code and Message say what to fix (VERSION_EXISTS, UNDECLARED_FILE,
// INSUFFICIENT_PERMISSIONS, ...). Uploads are never retried.
//
// API: POST /registries, POST /presets
func (c *Client) PublishPackage(ctx context.Context, p *Package) (*PublishResult, error) {
	if p.Preset != nil {
		return c.PublishPreset(ctx, p.Data)
	}
	body, ctype, err := p.Form()
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{
		method: "POST", path: "/registries", registry: p.ID(),
		header:  map[string][]string{"Content-Type": {ctype}},
		body:    body,
		timeout: PublishTimeout, noRetry5xx: true,
	})
	if err != nil {
		return nil, err
	}
	var r PublishResult
	if err := decodeJSON(resp.url, resp.body, &r); err != nil {
		return nil, err
	}
	r.URL = c.baseStr + "/registries/" + r.Path
	return &r, nil
}

// Form returns the multipart/form-data body that POST /registries takes
// for p, a registry (not a preset), and its Content-Type: the archive,
// its checksum and [Package.Signatures].
func (p *Package) Form() (body []byte, contentType string, err error) {
	if p.Preset != nil {
		return nil, "", fmt.Errorf("%w: a preset is published as its JSON document, not a form", ErrInvalidPackage)
	}
	if len(p.Signatures) > wire.MaxSignatures {
		return nil, "", fmt.Errorf("%w: %d signatures, at most %d", ErrInvalidPackage, len(p.Signatures), wire.MaxSignatures)
	}
	// Sized up front: the archive is most of it.
	size := len(p.Data) + 4<<10
	for _, sig := range p.Signatures {
		size += len(sig) + 256
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	mw := multipart.NewWriter(buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+wire.FormFile+`"; filename="`+p.Manifest.Name+`-`+p.Manifest.Version+`.tar.gz"`)
	h.Set("Content-Type", "application/gzip")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := pw.Write(p.Data); err != nil {
		return nil, "", err
	}
	if err := mw.WriteField(wire.FormChecksum, p.Checksum); err != nil {
		return nil, "", err
	}
	for _, sig := range p.Signatures {
		if err := mw.WriteField(wire.FormSignature, string(sig)); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// PublishPreset uploads a preset.json document. The server requires its
// admin token and refuses a version it already has (409 VERSION_EXISTS).
//
// API: POST /presets
func (c *Client) PublishPreset(ctx context.Context, presetJSON []byte) (*PublishResult, error) {
	label := registry.PresetNamespace
	if p, err := registry.ParsePreset(presetJSON); err == nil {
		label += "/" + p.Name + "@" + p.Version
	}
	resp, err := c.do(ctx, request{
		method: "POST", path: "/presets", registry: label,
		header: map[string][]string{"Content-Type": {"application/json"}},
		body:   presetJSON, noRetry5xx: true,
	})
	if err != nil {
		return nil, err
	}
	var r PublishResult
	if err := decodeJSON(resp.url, resp.body, &r); err != nil {
		return nil, err
	}
	r.URL = c.baseStr + "/presets/" + path.Base(path.Dir(r.Path))
	return &r, nil
}

// MayPublish asks the server whether the client's token may publish
// anything: it sends an upload with no file, which the server refuses
// after checking the token and before storing anything. It returns true
// when the token passed that check (the server then asked for the missing
// file), false when the server answered 403 INSUFFICIENT_PERMISSIONS or 401
// UNAUTHORIZED (a token that may only read, or none). A token the server
// does not know (401 INVALID_TOKEN or TOKEN_EXPIRED) and every other
// failure is returned as the error. Which namespaces the token may publish
// to is decided by the server for each upload.
//
// API: POST /registries (an empty multipart form)
func (c *Client) MayPublish(ctx context.Context) (bool, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := mw.Close(); err != nil {
		return false, err
	}
	_, err := c.do(ctx, request{
		method: "POST", path: "/registries",
		header: map[string][]string{"Content-Type": {mw.FormDataContentType()}},
		body:   body.Bytes(), noRetry5xx: true,
	})
	var se *StatusError
	switch {
	case err == nil:
		return false, fmt.Errorf("the server at %s accepted an empty upload; it is not a jig registry server", c.baseStr)
	case !errors.As(err, &se):
		return false, err
	case se.StatusCode == 400:
		return true, nil
	case se.Code == wire.CodeInsufficientPerms || se.Code == wire.CodeUnauthorized || se.Code == wire.CodeAnonymousUpload:
		return false, nil
	}
	return false, err
}
