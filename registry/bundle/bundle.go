package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
)

// ManifestName is the name of the bundle manifest, the last entry.
const ManifestName = "jig-bundle.json"

// Format is the format string of the bundle manifest this package writes
// and reads.
const Format = "jig-bundle/1"

// ModTime is the modification time of every entry.
var ModTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Default limits of [Read] (a zero field of [Limits] means its default).
const (
	DefaultMaxEntries   = 200_000
	DefaultMaxEntrySize = 256 << 20 // one file
	DefaultMaxTotal     = 16 << 30  // all entries together
	DefaultMaxNameLen   = 1024      // the longest storage key
	DefaultMaxDepth     = 64        // "/"-separated parts of a name
	// maxDocument bounds a JSON document held in memory: a manifest, a
	// digest index, a signatures document or a version list.
	maxDocument = 16 << 20
	// maxBundleManifest bounds the bundle manifest.
	maxBundleManifest = 64 << 20
)

// ErrInvalid is wrapped by every error of [Read] about the bundle's
// content, and by the error of a [Bundle.Open] reader whose entry changed.
var ErrInvalid = errors.New("invalid bundle")

// Manifest is the bundle manifest, [ManifestName].
type Manifest struct {
	// Format is [Format].
	Format string `json:"format"`
	// Namespace is the namespace of every entry ("@acme").
	Namespace string `json:"namespace"`
	// Entries lists every other entry, sorted by name.
	Entries []Entry `json:"entries"`
}

// Entry is one entry of a [Manifest].
type Entry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Digest string `json:"sha256"` // "sha256:<hex>"
}

// Limits bound what [Read] accepts. A zero field means its default.
type Limits struct {
	MaxEntries   int   // entries of any kind ([DefaultMaxEntries])
	MaxEntrySize int64 // bytes of one entry ([DefaultMaxEntrySize])
	MaxTotal     int64 // bytes of all entries ([DefaultMaxTotal])
	MaxNameLen   int   // bytes of a name ([DefaultMaxNameLen])
	MaxDepth     int   // parts of a name ([DefaultMaxDepth])
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxEntrySize <= 0 {
		l.MaxEntrySize = DefaultMaxEntrySize
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = DefaultMaxTotal
	}
	if l.MaxNameLen <= 0 {
		l.MaxNameLen = DefaultMaxNameLen
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// Writer writes a bundle. It is not safe for concurrent use.
type Writer struct {
	tw      *tar.Writer
	ns      string
	entries []Entry
	err     error
}

// NewWriter returns a Writer of a bundle of namespace ("@acme") to w.
func NewWriter(w io.Writer, namespace string) *Writer {
	bw := &Writer{tw: tar.NewWriter(w), ns: namespace}
	if !registry.ValidNamespace(namespace) {
		bw.err = fmt.Errorf("bundle: %q is not a namespace", namespace)
	}
	return bw
}

// Add writes the entry name (a storage key of the bundle's namespace, see
// the package documentation) of size bytes read from r. Names must come
// in strictly increasing bytewise order.
func (w *Writer) Add(name string, size int64, r io.Reader) error {
	if w.err != nil {
		return w.err
	}
	if _, err := classify(name, w.ns); err != nil {
		w.err = fmt.Errorf("bundle: %w", err)
		return w.err
	}
	if n := len(w.entries); n > 0 && name <= w.entries[n-1].Name {
		w.err = fmt.Errorf("bundle: entry %q added after %q; add entries in sorted order", name, w.entries[n-1].Name)
		return w.err
	}
	h := sha256.New()
	if err := w.write(name, size, io.TeeReader(r, h)); err != nil {
		w.err = err
		return err
	}
	w.entries = append(w.entries, Entry{Name: name, Size: size, Digest: registry.DigestPrefix + hex.EncodeToString(h.Sum(nil))})
	return nil
}

func (w *Writer) write(name string, size int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: ModTime}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("bundle: writing %s: %w", name, err)
	}
	n, err := io.Copy(w.tw, io.LimitReader(r, size))
	if err != nil {
		return fmt.Errorf("bundle: writing %s: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("bundle: writing %s: got %d bytes, want %d (it changed while it was read)", name, n, size)
	}
	return nil
}

// Close writes the bundle manifest and the end of the archive. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	doc, err := json.MarshalIndent(Manifest{Format: Format, Namespace: w.ns, Entries: append([]Entry{}, w.entries...)}, "", " ")
	if err != nil {
		return err
	}
	doc = append(doc, '\n')
	if err := w.write(ManifestName, int64(len(doc)), bytes.NewReader(doc)); err != nil {
		return err
	}
	w.err = errors.New("bundle: writer closed")
	return w.tw.Close()
}

// Bundle is a bundle that [Read] checked. Its documents are held in
// memory; package files are read through [Bundle.Open].
type Bundle struct {
	// Namespace is the namespace of every version ("@acme").
	Namespace string
	// Versions are the bundled versions, sorted by registry path and then
	// by version (bytewise).
	Versions []*Version
	// Lists are the version lists (versions.json) by registry path.
	Lists map[string]*registry.VersionList
	// Presets are the preset versions of a bundle of namespace
	// [registry.PresetNamespace], sorted by name and then by version
	// (bytewise); nil in a bundle of registries.
	Presets []*Preset
	// Entries is the bundle manifest's list.
	Entries []Entry

	ra  io.ReaderAt
	loc map[string]location
}

// Version is one bundled version.
type Version struct {
	// Namespace, Path and Version name it.
	Namespace, Path, Version string
	// Manifest is registry.json, byte for byte.
	Manifest []byte
	// Index is the digest index, and IndexBytes its bytes as stored.
	Index      *registry.DigestIndex
	IndexBytes []byte
	// Signatures is the signatures document as stored, nil when the
	// version has none; Parsed is it decoded.
	Signatures       []byte
	ParsedSignatures *wire.Signatures
	// LogProof is the exporting server's offline proof that the version
	// is in its namespace's transparency log (a C2SP tlog-proof, as
	// [translog.Proof.Marshal] writes it), nil when the bundle carries
	// none. [Read] checks its shape and that its record names the
	// version and its digest index; the signature of its checkpoint
	// needs the log's key, which the importer has.
	LogProof []byte
	// Files are the file paths of the index, sorted.
	Files []string
}

// Preset is one bundled preset version.
type Preset struct {
	// Name and Version name it ("node", "1.0.0").
	Name, Version string
	// Data is its preset.json, byte for byte.
	Data []byte
}

// ID returns "@presets/<name>@<version>".
func (p *Preset) ID() string { return registry.PresetNamespace + "/" + p.Name + "@" + p.Version }

// ID returns "@ns/<path>@<version>".
func (v *Version) ID() string { return v.Namespace + "/" + v.Path + "@" + v.Version }

type location struct {
	off, size int64
	digest    string
}

// Open returns a reader of the package file of v (a name of v.Files). The
// reader returns an error wrapping [ErrInvalid] at its end if the bytes it
// read differ from those [Read] checked.
func (b *Bundle) Open(v *Version, file string) (io.Reader, int64, error) {
	name := layout.File(v.Namespace, v.Path, v.Version, file)
	l, ok := b.loc[name]
	if !ok {
		return nil, 0, fmt.Errorf("bundle: no entry %s", name)
	}
	return &checkedReader{r: io.NewSectionReader(b.ra, l.off, l.size), h: sha256.New(), want: l.digest, name: name}, l.size, nil
}

type checkedReader struct {
	r    io.Reader
	h    hash.Hash
	want string
	name string
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF {
		if got := registry.DigestPrefix + hex.EncodeToString(c.h.Sum(nil)); got != c.want {
			return n, fmt.Errorf("%w: %s changed while it was read (sha-256 %s, the bundle manifest says %s)", ErrInvalid, c.name, got, c.want)
		}
	}
	return n, err
}

// invalid returns an error wrapping [ErrInvalid].
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// classify checks that name is a bundle entry of namespace ns ("" takes
// the first entry's) and returns its key.
func classify(name, ns string) (layout.Key, error) {
	k := layout.Classify(name)
	if k.Kind == layout.KindPreset || k.Kind == layout.KindPresetVersion {
		if k.String() != name {
			return k, invalid("entry %q is not in its normal form", name)
		}
		if ns != "" && ns != registry.PresetNamespace {
			return k, invalid("entry %q is a preset, but the bundle is of namespace %s (presets travel in a bundle of their own)", name, ns)
		}
		k.Namespace = registry.PresetNamespace
		return k, nil
	}
	switch k.Kind {
	case layout.KindVersions, layout.KindManifest, layout.KindDigestIndex, layout.KindSignatures, layout.KindLogProof:
	case layout.KindFile:
		if layout.Reserved(k.File) {
			return k, invalid("entry %q uses a reserved file name", name)
		}
	default:
		return k, invalid("entry %q is not a registry version's file in the storage layout (@ns/<path>/<version>/<file> or @ns/<path>/versions.json) nor a preset (presets/<name>/preset.json or presets/<name>/<version>/preset.json)", name)
	}
	if k.String() != name {
		return k, invalid("entry %q is not in its normal form", name)
	}
	if k.Namespace == registry.PresetNamespace {
		return k, invalid("entry %q: %s names presets (presets/<name>/…), not registries", name, registry.PresetNamespace)
	}
	if ns != "" && k.Namespace != ns {
		if ns == registry.PresetNamespace {
			return k, invalid("entry %q is a registry's, but the bundle is of presets (registries travel in a bundle of their own)", name)
		}
		return k, invalid("entry %q is not in namespace %s", name, ns)
	}
	return k, nil
}

// countingReader counts the bytes read through it: after tar.Reader.Next
// returns, the count is the offset of the entry's data.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// scanned is what the first pass learned of one entry.
type scanned struct {
	name string
	key  layout.Key
	loc  location
	doc  []byte // the bytes of a document (not of a package file)
}

// Read checks the bundle in ra (size bytes) as the package documentation
// describes and returns it. Any problem gives an error wrapping
// [ErrInvalid] that names the entry.
func Read(ra io.ReaderAt, size int64, lim Limits) (*Bundle, error) {
	lim = lim.withDefaults()
	cr := &countingReader{r: io.NewSectionReader(ra, 0, size)}
	tr := tar.NewReader(cr)
	var (
		entries []scanned
		total   int64
		ns      string
		man     []byte
	)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, invalid("not a readable tar file: %v", err)
		}
		if man != nil {
			return nil, invalid("entry %q comes after %s, which must be last", hdr.Name, ManifestName)
		}
		if len(entries) >= lim.MaxEntries {
			return nil, invalid("more than %d entries", lim.MaxEntries)
		}
		name := hdr.Name
		if len(name) > lim.MaxNameLen {
			return nil, invalid("entry name longer than %d bytes: %.80q…", lim.MaxNameLen, name)
		}
		if strings.Count(name, "/")+1 > lim.MaxDepth {
			return nil, invalid("entry %q is deeper than %d parts", name, lim.MaxDepth)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, invalid("entry %q is a %s; a bundle holds regular files only", name, kindName(hdr.Typeflag))
		}
		for rec := range hdr.PAXRecords {
			if strings.HasPrefix(rec, "GNU.sparse") {
				return nil, invalid("entry %q is a sparse file; a bundle holds plain regular files only", name)
			}
		}
		if hdr.Size < 0 || hdr.Size > lim.MaxEntrySize {
			return nil, invalid("entry %q is larger than %d bytes", name, lim.MaxEntrySize)
		}
		if total += hdr.Size; total > lim.MaxTotal {
			return nil, invalid("entries larger than %d bytes in total", lim.MaxTotal)
		}
		var k layout.Key
		if name != ManifestName {
			if k, err = classify(name, ns); err != nil {
				return nil, err
			}
			ns = k.Namespace
		}
		// The bundle manifest is last whatever its name's order ("presets/…"
		// sorts after it).
		if n := len(entries); n > 0 && name != ManifestName && name <= entries[n-1].name {
			if name == entries[n-1].name {
				return nil, invalid("entry %q appears twice", name)
			}
			return nil, invalid("entry %q comes after %q; entries must be sorted by name", name, entries[n-1].name)
		}
		off := cr.n
		if name == ManifestName {
			if hdr.Size > maxBundleManifest {
				return nil, invalid("%s is larger than %d bytes", name, maxBundleManifest)
			}
			if man, err = readAll(tr, hdr.Size); err != nil {
				return nil, invalid("reading %s: %v", name, err)
			}
			continue
		}
		e := scanned{name: name, key: k, loc: location{off: off, size: hdr.Size}}
		h := sha256.New()
		if k.Kind == layout.KindFile {
			if _, err := io.Copy(h, tr); err != nil {
				return nil, invalid("reading %s: %v", name, err)
			}
		} else {
			if hdr.Size > maxDocument {
				return nil, invalid("entry %q is larger than %d bytes", name, maxDocument)
			}
			if e.doc, err = readAll(tr, hdr.Size); err != nil {
				return nil, invalid("reading %s: %v", name, err)
			}
			h.Write(e.doc)
		}
		if cr.n-off != hdr.Size {
			return nil, invalid("entry %q is not stored as one run of bytes", name)
		}
		e.loc.digest = registry.DigestPrefix + hex.EncodeToString(h.Sum(nil))
		entries = append(entries, e)
	}
	if man == nil {
		return nil, invalid("no %s: not a jig bundle, or cut short", ManifestName)
	}
	var m Manifest
	if err := registry.CheckJSONDepth(ManifestName, man); err != nil {
		return nil, invalid("%v", err)
	}
	if err := json.Unmarshal(man, &m); err != nil {
		return nil, invalid("%s is not valid JSON: %v", ManifestName, err)
	}
	if m.Format != Format {
		return nil, invalid("%s has format %q; this jig reads %q bundles (update jig to read newer ones)", ManifestName, m.Format, Format)
	}
	if !registry.ValidNamespace(m.Namespace) {
		return nil, invalid("%s names an invalid namespace %q", ManifestName, m.Namespace)
	}
	if ns != "" && ns != m.Namespace {
		return nil, invalid("the entries are in namespace %s, but %s says %s", ns, ManifestName, m.Namespace)
	}
	if len(m.Entries) != len(entries) {
		return nil, invalid("%s lists %d entries, the bundle holds %d", ManifestName, len(m.Entries), len(entries))
	}
	for i, e := range entries {
		want := m.Entries[i]
		if want.Name != e.name {
			return nil, invalid("%s lists %q where the bundle holds %q", ManifestName, want.Name, e.name)
		}
		if want.Size != e.loc.size || want.Digest != e.loc.digest {
			return nil, invalid("entry %q does not match %s (sha-256 %s of %d bytes, listed as %s of %d bytes): the bundle was changed or damaged", e.name, ManifestName, e.loc.digest, e.loc.size, want.Digest, want.Size)
		}
	}
	return assemble(ra, m, entries)
}

// assemble groups the checked entries into versions and checks each
// version against its digest index.
func assemble(ra io.ReaderAt, m Manifest, entries []scanned) (*Bundle, error) {
	b := &Bundle{Namespace: m.Namespace, Lists: map[string]*registry.VersionList{}, Entries: m.Entries, ra: ra, loc: map[string]location{}}
	type vkey struct{ path, version string }
	versions := map[vkey]*Version{}
	files := map[vkey]map[string]string{}
	get := func(k layout.Key) *Version {
		vk := vkey{k.Path, k.Version}
		v := versions[vk]
		if v == nil {
			v = &Version{Namespace: k.Namespace, Path: k.Path, Version: k.Version}
			versions[vk] = v
			files[vk] = map[string]string{}
		}
		return v
	}
	presets := map[[2]string]*Preset{}
	for _, e := range entries {
		k := e.key
		switch k.Kind {
		case layout.KindPreset, layout.KindPresetVersion:
			p, err := checkPreset(e.name, k, e.doc)
			if err != nil {
				return nil, err
			}
			pk := [2]string{p.Name, p.Version}
			if other, ok := presets[pk]; ok {
				// The latest (presets/<name>/preset.json) and the
				// versioned copy of the same version must agree.
				if !bytes.Equal(other.Data, p.Data) {
					return nil, invalid("%s: %s and %s differ", p.ID(), layout.Preset(p.Name), layout.PresetVersion(p.Name, p.Version))
				}
				continue
			}
			presets[pk] = p
		case layout.KindVersions:
			vl, err := registry.ParseVersionList(e.doc)
			if err != nil {
				return nil, invalid("%s: %v", e.name, err)
			}
			b.Lists[k.Path] = vl
		case layout.KindManifest:
			get(k).Manifest = e.doc
		case layout.KindDigestIndex:
			x, err := registry.ParseDigestIndex(e.doc)
			if err != nil {
				return nil, invalid("%s: %v", e.name, err)
			}
			if x.Namespace != k.Namespace || x.Path != k.Path || x.Version != k.Version {
				return nil, invalid("%s names %s/%s@%s", e.name, x.Namespace, x.Path, x.Version)
			}
			v := get(k)
			v.Index, v.IndexBytes = x, e.doc
		case layout.KindSignatures:
			var s wire.Signatures
			if err := registry.CheckJSONDepth(e.name, e.doc); err != nil {
				return nil, invalid("%v", err)
			}
			if err := json.Unmarshal(e.doc, &s); err != nil {
				return nil, invalid("%s is not valid JSON: %v", e.name, err)
			}
			if s.Namespace != k.Namespace || s.Path != k.Path || s.Version != k.Version {
				return nil, invalid("%s names %s/%s@%s", e.name, s.Namespace, s.Path, s.Version)
			}
			if len(s.Signatures) > wire.MaxSignatures {
				return nil, invalid("%s holds %d signatures, more than %d", e.name, len(s.Signatures), wire.MaxSignatures)
			}
			v := get(k)
			v.Signatures, v.ParsedSignatures = e.doc, &s
		case layout.KindLogProof:
			if err := checkLogProof(e.name, k, e.doc); err != nil {
				return nil, err
			}
			get(k).LogProof = e.doc
		case layout.KindFile:
			get(k)
			files[vkey{k.Path, k.Version}][k.File] = e.loc.digest
			b.loc[e.name] = e.loc
		}
	}
	for _, vk := range slices.SortedFunc(maps.Keys(versions), func(a, b vkey) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.version, b.version)
	}) {
		v := versions[vk]
		switch {
		case v.Manifest == nil:
			return nil, invalid("%s has no %s", v.ID(), layout.ManifestFile)
		case v.Index == nil:
			return nil, invalid("%s has no digest index (%s)", v.ID(), layout.DigestIndexFile)
		}
		if err := checkManifest(v); err != nil {
			return nil, err
		}
		if v.LogProof != nil {
			p, _ := translog.ParseProof(v.LogProof)
			r, _ := translog.ParseRecord(p.Record)
			if d := registry.Digest(v.IndexBytes); r.IndexDigest != d {
				return nil, invalid("%s: its log proof's record names digest index %s, the bundle's has sha-256 %s", v.ID(), r.IndexDigest, d)
			}
		}
		if d := registry.Digest(v.Manifest); d != v.Index.Manifest {
			return nil, invalid("%s: %s has sha-256 %s, its digest index says %s", v.ID(), layout.ManifestFile, d, v.Index.Manifest)
		}
		got := files[vk]
		for f, want := range v.Index.Files {
			d, ok := got[f]
			if !ok {
				return nil, invalid("%s: file %s of its digest index is not in the bundle", v.ID(), f)
			}
			if d != want {
				return nil, invalid("%s: file %s has sha-256 %s, its digest index says %s", v.ID(), f, d, want)
			}
		}
		for f := range got {
			if _, ok := v.Index.Files[f]; !ok {
				return nil, invalid("%s: file %s is not in its digest index", v.ID(), f)
			}
		}
		v.Files = v.Index.FilePaths()
		b.Versions = append(b.Versions, v)
	}
	for _, pk := range slices.SortedFunc(maps.Keys(presets), func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	}) {
		b.Presets = append(b.Presets, presets[pk])
	}
	return b, nil
}

// checkLogProof checks that the log proof of entry name (a key k of kind
// log-proof) is a C2SP tlog-proof whose record names the version.
func checkLogProof(name string, k layout.Key, doc []byte) error {
	p, err := translog.ParseProof(doc)
	if err != nil {
		return invalid("%s: %v", name, err)
	}
	r, err := translog.ParseRecord(p.Record)
	if err != nil {
		return invalid("%s: %v", name, err)
	}
	if r.Namespace != k.Namespace || r.Path != k.Path || r.Version != k.Version {
		return invalid("%s is the log proof of %s", name, r.ID())
	}
	return nil
}

// checkPreset checks that the preset document of entry name (a key k of
// kind preset or preset-version) parses as a preset named by its key: the
// same name, and for a versioned copy the same version. The rest of the
// document (its schema) is the importer's to check, as a publish would.
func checkPreset(name string, k layout.Key, doc []byte) (*Preset, error) {
	p, err := registry.ParsePreset(doc)
	if err != nil {
		return nil, invalid("%s: %v", name, err)
	}
	if p.Name != k.Preset {
		return nil, invalid("%s names preset %q", name, p.Name)
	}
	if !registry.ValidVersion(p.Version) {
		return nil, invalid("%s has version %q, which is not a semantic version such as 1.0.0", name, p.Version)
	}
	if k.Kind == layout.KindPresetVersion && p.Version != k.Version {
		return nil, invalid("%s says version %q", name, p.Version)
	}
	return &Preset{Name: p.Name, Version: p.Version, Data: doc}, nil
}

// checkManifest checks that the registry.json of v names v: its version,
// and its namespace when it has one. The rest of the manifest is the
// publisher's, checked when it was published.
func checkManifest(v *Version) error {
	if err := registry.CheckJSONDepth(layout.ManifestFile, v.Manifest); err != nil {
		return invalid("%s: %v", v.ID(), err)
	}
	var m struct {
		Namespace string `json:"namespace"`
		Version   string `json:"version"`
	}
	if err := json.Unmarshal(v.Manifest, &m); err != nil {
		return invalid("%s: %s is not a JSON object: %v", v.ID(), layout.ManifestFile, err)
	}
	if m.Version != v.Version || (m.Namespace != "" && m.Namespace != v.Namespace) {
		return invalid("%s: its %s says %s version %q", v.ID(), layout.ManifestFile, m.Namespace, m.Version)
	}
	return nil
}

// readAll reads exactly n bytes of r, allocating as they arrive (a header
// may claim more than the file holds).
func readAll(r io.Reader, n int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, n))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != n {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}

func kindName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeDir:
		return "directory"
	case tar.TypeFifo:
		return "FIFO"
	}
	return fmt.Sprintf("special entry (type %q)", t)
}
