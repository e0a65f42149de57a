package registryclient

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/textproto"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// Limits of what [OpenPackage] and [Pack] accept, the server's limits.
const (
	// MaxPackageSize is the largest archive a server accepts (100 MiB).
	MaxPackageSize = 100 << 20
	// MaxManifestSize is the largest registry.json or preset.json read.
	MaxManifestSize = 1 << 20
	// PublishTimeout bounds one upload, whatever the client's timeout.
	PublishTimeout = 10 * time.Minute
)

// ErrInvalidPackage is wrapped by every error about a package that cannot
// be published as it is (checked before anything is sent).
var ErrInvalidPackage = errors.New("invalid package")

// packMTime is the modification time of every packed entry, so that the
// same directory always packs to the same bytes.
var packMTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

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

// OpenPackage reads what src names and checks it against the embedded
// schemas, so that mistakes are reported before anything is uploaded:
//
//   - a directory with a registry.json: packed with [Pack];
//   - a directory with a preset.json, or a .json file: a preset;
//   - any other file: a .tar.gz registry package, sent as it is (its
//     registry.json is read to learn the namespace).
func OpenPackage(src string) (*Package, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	if fi.IsDir() {
		if _, err := os.Stat(filepath.Join(src, layout.ManifestFile)); err == nil {
			var buf bytes.Buffer
			m, files, err := Pack(&buf, src)
			if err != nil {
				return nil, err
			}
			return newArchivePackage(m, buf.Bytes(), files), nil
		}
		if _, err := os.Stat(filepath.Join(src, layout.PresetFile)); err == nil {
			return openPreset(filepath.Join(src, layout.PresetFile))
		}
		return nil, fmt.Errorf("%w: %s has neither a registry.json nor a preset.json", ErrInvalidPackage, src)
	}
	if strings.HasSuffix(strings.ToLower(src), ".json") {
		return openPreset(src)
	}
	if fi.Size() > MaxPackageSize {
		return nil, fmt.Errorf("%w: %s is %s, over the server's limit of %s", ErrInvalidPackage, src, humanBytes(fi.Size()), humanBytes(MaxPackageSize))
	}
	data, err := safefile.ReadFile(src, MaxPackageSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	raw, files, err := readArchive(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, src, err)
	}
	m, err := checkManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, src, err)
	}
	return newArchivePackage(m, data, files), nil
}

func newArchivePackage(m *registry.Manifest, data []byte, files []string) *Package {
	sum := sha256.Sum256(data)
	return &Package{Manifest: m, Data: data, Checksum: hex.EncodeToString(sum[:]), Files: files}
}

func openPreset(file string) (*Package, error) {
	data, err := readLimited(file, MaxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
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

func readLimited(file string, max int64) ([]byte, error) {
	f, _, err := safefile.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, file, max)
}

// checkManifest validates registry.json as the server will.
func checkManifest(data []byte) (*registry.Manifest, error) {
	if err := registry.ValidateManifestJSON(data); err != nil {
		return nil, fmt.Errorf("registry.json: %w", err)
	}
	m, err := registry.ParseManifest(data)
	if err != nil {
		return nil, err
	}
	if _, err := m.StorageSegments(); err != nil {
		return nil, fmt.Errorf("registry.json: %w", err)
	}
	return m, nil
}

// Pack writes the registry in dir to w as a gzip-compressed tar the server
// accepts: registry.json at the root, then every file registry.json
// declares (files[].path, language blocks, custom merge scripts), sorted,
// and nothing else. Entries are regular files with fixed mode (0644, 0755
// when executable by the owner), owner, group and modification time, so
// the same directory always packs to the same bytes. Declared files must
// be regular files inside dir (symbolic links are refused). It returns the
// manifest and the packed paths.
func Pack(w io.Writer, dir string) (*registry.Manifest, []string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	defer root.Close()
	raw, err := readRootFile(root, layout.ManifestFile, MaxManifestSize)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	m, err := checkManifest(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, dir, err)
	}
	declared := m.FilePaths()
	sort.Strings(declared)
	files := []string{layout.ManifestFile}
	var total int64 = int64(len(raw))
	for _, p := range declared {
		if p == layout.ManifestFile {
			continue
		}
		fi, err := root.Lstat(filepath.FromSlash(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("%w: registry.json declares %s, which does not exist in %s", ErrInvalidPackage, p, dir)
		case err != nil:
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, p, err)
		case !fi.Mode().IsRegular():
			return nil, nil, fmt.Errorf("%w: %s is not a regular file (symbolic links and special files cannot be published)", ErrInvalidPackage, p)
		}
		total += fi.Size()
		files = append(files, p)
	}
	if total > MaxPackageSize {
		return nil, nil, fmt.Errorf("%w: the declared files add up to %s, over the server's limit of %s", ErrInvalidPackage, humanBytes(total), humanBytes(MaxPackageSize))
	}

	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return nil, nil, err
	}
	tw := tar.NewWriter(zw)
	for _, p := range files {
		if err := packFile(tw, root, p); err != nil {
			return nil, nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return m, files, nil
}

func packFile(tw *tar.Writer, root *os.Root, p string) error {
	// Checked again once open: a file swapped for a FIFO since the
	// Lstat must not block the pack.
	f, fi, err := safefile.OpenIn(root, filepath.FromSlash(p))
	if errors.Is(err, safefile.ErrNotRegular) {
		return fmt.Errorf("%w: %s is not a regular file", ErrInvalidPackage, p)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	defer f.Close()
	mode := int64(0o644)
	if fi.Mode().Perm()&0o100 != 0 {
		mode = 0o755
	}
	h := &tar.Header{
		Typeflag: tar.TypeReg, Name: p, Size: fi.Size(), Mode: mode,
		ModTime: packMTime, Uid: 0, Gid: 0, Uname: "", Gname: "",
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("packing %s: %w", p, err)
	}
	n, err := io.Copy(tw, io.LimitReader(f, fi.Size()))
	if err != nil {
		return fmt.Errorf("packing %s: %w", p, err)
	}
	if n != fi.Size() {
		return fmt.Errorf("packing %s: the file changed while it was read", p)
	}
	return nil
}

// readCapped reads r to the end, refusing content larger than max bytes;
// name is what the error calls it.
func readCapped(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %s", name, humanBytes(max))
	}
	return data, nil
}

func readRootFile(root *os.Root, name string, max int64) ([]byte, error) {
	f, _, err := safefile.OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, name, max)
}

// readArchive returns the registry.json of a .tar.gz and its regular file
// names, reading at most MaxPackageSize decompressed bytes.
func readArchive(data []byte) ([]byte, []string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("not a .tar.gz archive: %w", err)
	}
	tr := tar.NewReader(io.LimitReader(zr, MaxPackageSize+(32<<20)))
	var manifest []byte
	var files []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("not a .tar.gz archive: %w", err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA { //nolint:staticcheck // old tars
			continue
		}
		files = append(files, name)
		if name == layout.ManifestFile {
			if manifest, err = io.ReadAll(io.LimitReader(tr, MaxManifestSize+1)); err != nil {
				return nil, nil, err
			}
			if len(manifest) > MaxManifestSize {
				return nil, nil, fmt.Errorf("registry.json is larger than %s", humanBytes(MaxManifestSize))
			}
		}
	}
	if manifest == nil {
		return nil, nil, errors.New("no registry.json at the archive root; pack from inside the registry directory (tar -czf ../pkg.tar.gz .)")
	}
	return manifest, files, nil
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
// multipart form with its checksum, a preset as its JSON document (which
// needs the server's admin token). A refusal is a [*StatusError] whose
// Code and Message say what to fix (VERSION_EXISTS, UNDECLARED_FILE,
// INSUFFICIENT_PERMISSIONS, ...). Uploads are never retried.
//
// API: POST /registries, POST /presets
func (c *Client) PublishPackage(ctx context.Context, p *Package) (*PublishResult, error) {
	if p.Preset != nil {
		return c.PublishPreset(ctx, p.Data)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+wire.FormFile+`"; filename="`+p.Manifest.Name+`-`+p.Manifest.Version+`.tar.gz"`)
	h.Set("Content-Type", "application/gzip")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return nil, err
	}
	if _, err := pw.Write(p.Data); err != nil {
		return nil, err
	}
	if err := mw.WriteField(wire.FormChecksum, p.Checksum); err != nil {
		return nil, err
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{
		method: "POST", path: "/registries", registry: p.ID(),
		header:  map[string][]string{"Content-Type": {mw.FormDataContentType()}},
		body:    body.Bytes(),
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
