package pkgarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
)

// ErrInvalidPackage is wrapped by every error of [Pack] about the
// directory it packs (rather than about writing the archive).
var ErrInvalidPackage = errors.New("invalid package")

// packMTime is the modification time of every packed entry, so that the
// same directory always packs to the same bytes.
var packMTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Pack writes the registry in dir to w as a gzip-compressed tar:
// registry.json at the root, then every file registry.json declares
// (files[].path, language blocks, custom merge scripts), sorted, and
// nothing else. Entries are regular files with fixed mode (0644, 0755 when
// executable by the owner), owner, group and modification time, so the
// same directory always packs to the same bytes. Declared files must be
// regular files inside dir (symbolic links are refused), and registry.json
// must pass its schema. It returns the manifest and the packed paths.
//
// Pack checks what it needs to know what to pack; [Inspect] runs the rest
// of the checks an upload gets.
func Pack(w io.Writer, dir string) (*registry.Manifest, []string, error) {
	return pack(dir, func(int64) io.Writer { return w })
}

// PackBytes is [Pack] into memory: it returns the archive. Its buffer is
// sized from the declared files before they are packed, so that it is not
// grown (and copied) again and again as a buffer written by Pack is: in a
// process that just started, every page of memory it touches for the
// first time costs a page fault.
func PackBytes(dir string) ([]byte, *registry.Manifest, []string, error) {
	var buf *bytes.Buffer
	m, files, err := pack(dir, func(most int64) io.Writer {
		buf = bytes.NewBuffer(make([]byte, 0, min(most, DefaultMaxUpload)))
		return buf
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return buf.Bytes(), m, files, nil
}

// pack is [Pack] to the writer that writer returns, once the files to pack
// are known, for an archive of at most most bytes.
func pack(dir string, writer func(most int64) io.Writer) (*registry.Manifest, []string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	defer root.Close()
	raw, err := readManifest(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidPackage, err)
	}
	if err := registry.ValidateManifestJSON(raw); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: registry.json: %w", ErrInvalidPackage, dir, err)
	}
	m, err := registry.ParseManifest(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, dir, err)
	}
	if _, err := m.StorageSegments(); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: registry.json: %w", ErrInvalidPackage, dir, err)
	}
	if raw, m, err = addChangelog(root, raw, m); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, dir, err)
	}
	if raw, m, err = addReadme(root, raw, m); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, dir, err)
	}
	declared := m.FilePaths()
	sort.Strings(declared)
	files := []string{layout.ManifestFile}
	total := int64(len(raw))
	tarSize := tarMember(int64(len(raw)))
	folders := &folders{root: root, open: map[string]*os.Root{}}
	defer folders.close()
	for _, p := range declared {
		if p == layout.ManifestFile {
			continue
		}
		fi, err := folders.lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("%w: registry.json declares %s, which does not exist in %s", ErrInvalidPackage, p, dir)
		case err != nil:
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidPackage, p, err)
		case !fi.Mode().IsRegular():
			return nil, nil, fmt.Errorf("%w: %s is not a regular file (symbolic links and special files cannot be published)", ErrInvalidPackage, p)
		}
		total += fi.Size()
		tarSize += tarMember(fi.Size())
		files = append(files, p)
	}
	if total > DefaultMaxUnpacked {
		return nil, nil, fmt.Errorf("%w: the declared files add up to %d bytes, over the server's limit of %d MiB",
			ErrInvalidPackage, total, DefaultMaxUnpacked>>20)
	}

	// The tar stream, and the gzip framing of it stored without
	// compression (5 bytes per block of at most 64 KiB) around it.
	tarSize += 2 * tarBlock
	w := writer(tarSize + tarSize/(64<<10)*5 + 64)
	buf := make([]byte, copyBuffer)
	err = writeArchive(w, func(tw *tar.Writer) error {
		for _, p := range files {
			if p == layout.ManifestFile {
				// Written from raw: it may carry the CHANGELOG.md entry.
				if err := writeMember(tw, p, 0o644, raw); err != nil {
					return err
				}
				continue
			}
			if err := packFile(tw, folders, p, buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return m, files, nil
}

// PackFiles writes the package archive of a version held in memory, as
// [Pack] writes one from a folder: registry.json (the bytes manifest),
// then the files by path in byte order, regular files of mode 0644 with
// Pack's fixed modification time. jig-server packs a version an upstream
// served this way to run the checks of an upload on it.
func PackFiles(w io.Writer, manifest []byte, files map[string][]byte) error {
	return writeArchive(w, func(tw *tar.Writer) error {
		if err := writeMember(tw, layout.ManifestFile, 0o644, manifest); err != nil {
			return err
		}
		for _, p := range slices.Sorted(maps.Keys(files)) {
			if p == layout.ManifestFile {
				continue
			}
			if err := writeMember(tw, p, 0o644, files[p]); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeArchive writes the gzip-compressed tar stream of a package, its
// members written by members. It compresses at gzip's default level:
// the best one took 40% more time (a fifth more on source code) for
// archives a few tenths of a percent smaller.
func writeArchive(w io.Writer, members func(tw *tar.Writer) error) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	if err := members(tw); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// memberHeader is the tar header of a package member: a regular file.
func memberHeader(name string, mode, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode, ModTime: packMTime}
}

// writeMember writes one member held in memory.
func writeMember(tw *tar.Writer, name string, mode int64, body []byte) error {
	if err := tw.WriteHeader(memberHeader(name, mode, int64(len(body)))); err != nil {
		return fmt.Errorf("packing %s: %w", name, err)
	}
	if _, err := tw.Write(body); err != nil {
		return fmt.Errorf("packing %s: %w", name, err)
	}
	return nil
}

// tarBlock is the tar block size; copyBuffer the size of the buffer
// [Pack] copies every file through.
const (
	tarBlock   = 512
	copyBuffer = 32 << 10
)

// tarMember is the size in a tar stream of a member of size bytes with a
// plain header (package paths are short enough for one).
func tarMember(size int64) int64 {
	return tarBlock + (size+tarBlock-1)/tarBlock*tarBlock
}

func packFile(tw *tar.Writer, folders *folders, p string, buf []byte) error {
	// Checked again once open: a file swapped for a FIFO since the
	// Lstat must not block the pack.
	f, fi, err := folders.openFile(p)
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
	if err := tw.WriteHeader(memberHeader(p, mode, fi.Size())); err != nil {
		return fmt.Errorf("packing %s: %w", p, err)
	}
	n, err := io.CopyBuffer(tw, io.LimitReader(f, fi.Size()), buf)
	if err != nil {
		return fmt.Errorf("packing %s: %w", p, err)
	}
	if n != fi.Size() {
		return fmt.Errorf("packing %s: the file changed while it was read", p)
	}
	return nil
}

// maxFolders bounds the folder handles [Pack] keeps open at once.
const maxFolders = 16

// folders looks declared files up, and opens them, through a handle of
// their folder opened once, instead of from the root each time (which
// opens every folder on the way, for every file). A path that is not a
// plain package path ([registry.ValidFilePath]), a folder that cannot be
// opened, and any failure through a folder's handle go through the root
// with the whole path, as without folders: what is refused, and the
// message, are the same.
type folders struct {
	root *os.Root
	open map[string]*os.Root // nil: the folder could not be opened
}

// in returns the handle of p's folder and p's name in it, or false.
func (d *folders) in(p string) (*os.Root, string, bool) {
	dir, name := path.Split(p)
	if dir == "" || !registry.ValidFilePath(p) {
		return nil, "", false
	}
	r, ok := d.open[dir]
	if !ok {
		if len(d.open) >= maxFolders {
			d.close()
		}
		r, _ = d.root.OpenRoot(filepath.FromSlash(strings.TrimSuffix(dir, "/")))
		d.open[dir] = r
	}
	return r, name, r != nil
}

// lstat is the root's Lstat of p.
func (d *folders) lstat(p string) (fs.FileInfo, error) {
	if r, name, ok := d.in(p); ok {
		if fi, err := r.Lstat(name); err == nil {
			return fi, nil
		}
	}
	return d.root.Lstat(filepath.FromSlash(p))
}

// openFile is [safefile.OpenIn] of p in the root.
func (d *folders) openFile(p string) (*os.File, fs.FileInfo, error) {
	if r, name, ok := d.in(p); ok {
		if f, fi, err := safefile.OpenIn(r, name); err == nil {
			return f, fi, nil
		}
	}
	return safefile.OpenIn(d.root, filepath.FromSlash(p))
}

// close closes the folder handles.
func (d *folders) close() {
	for dir, r := range d.open {
		if r != nil {
			r.Close()
		}
		delete(d.open, dir)
	}
}

// ReadPreset reads a preset.json document; one of more than
// [MaxPresetSize] bytes is refused as jig-server refuses it.
func ReadPreset(r io.Reader) ([]byte, error) {
	return readCapped(r, MaxPresetSize, PresetTooLarge())
}

// readCapped reads r to the end; more than max bytes is the error tooLarge.
func readCapped(r io.Reader, max int64, tooLarge error) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooLarge
	}
	return data, nil
}

func readManifest(root *os.Root) ([]byte, error) {
	f, _, err := safefile.OpenIn(root, layout.ManifestFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, DefaultMaxManifestSize, fmt.Errorf("registry.json is larger than %d bytes", DefaultMaxManifestSize))
}

// readBeside reads the file name of the package directory that is not a
// package file (CHANGELOG.md, catalog/README.md): nil without error when
// it does not exist; an error when it is not a regular file (a symbolic
// link) or holds more than max bytes (tooLarge).
func readBeside(root *os.Root, name string, max int64, tooLarge error) ([]byte, error) {
	f, _, err := safefile.OpenIn(root, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	return readCapped(f, max, tooLarge)
}

// addReadme returns the manifest with the directory's catalog README
// ([registry.CatalogReadmeFile]) as its "readme", when it has none of
// its own and the file exists; raw and m as they are otherwise. A file
// over [registry.MaxReadme] bytes, not UTF-8, or not a regular file is an
// error that says so.
func addReadme(root *os.Root, raw []byte, m *registry.Manifest) ([]byte, *registry.Manifest, error) {
	if m.Readme != "" {
		return raw, m, nil
	}
	md, err := readBeside(root, registry.CatalogReadmeFile, registry.MaxReadme,
		fmt.Errorf("%s is larger than the %d KiB a catalog README may have: keep it short and link to the rest", registry.CatalogReadmeFile, registry.MaxReadme>>10))
	if md == nil || err != nil {
		return raw, m, err
	}
	if !utf8.Valid(md) {
		return nil, nil, fmt.Errorf("%s is not UTF-8 text", registry.CatalogReadmeFile)
	}
	if len(bytes.TrimSpace(md)) == 0 {
		return raw, m, nil
	}
	withReadme := registry.WithReadme(raw, string(md))
	if err := registry.ValidateManifestJSON(withReadme); err != nil {
		return nil, nil, fmt.Errorf("registry.json with %s: %w", registry.CatalogReadmeFile, err)
	}
	m2, err := registry.ParseManifest(withReadme)
	if err != nil {
		return nil, nil, err
	}
	return withReadme, m2, nil
}

// maxChangelogFile bounds the CHANGELOG.md [Pack] reads.
const maxChangelogFile = 8 << 20

// addChangelog returns the manifest with the entry of its version from
// the directory's CHANGELOG.md as its "changelog", when it has none of its
// own and the file has one ([registry.ParseChangelog]); raw and m as they
// are otherwise. A CHANGELOG.md that is not a regular file (a symbolic
// link) is an error.
func addChangelog(root *os.Root, raw []byte, m *registry.Manifest) ([]byte, *registry.Manifest, error) {
	if m.Changelog != "" {
		return raw, m, nil
	}
	md, err := readBeside(root, registry.ChangelogFile, maxChangelogFile, fmt.Errorf("%s is larger than %d MiB", registry.ChangelogFile, maxChangelogFile>>20))
	if md == nil || err != nil {
		return raw, m, err
	}
	for _, e := range registry.ParseChangelog(md) {
		if e.Version != m.Version {
			continue
		}
		withLog := registry.WithChangelog(raw, e.Text)
		if err := registry.ValidateManifestJSON(withLog); err != nil {
			return nil, nil, fmt.Errorf("registry.json with the %s entry of %s: %w", e.Version, registry.ChangelogFile, err)
		}
		m2, err := registry.ParseManifest(withLog)
		if err != nil {
			return nil, nil, err
		}
		return withLog, m2, nil
	}
	return raw, m, nil
}
