package translog

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry"
)

// TileHeight is the height of the log's tiles (as sumdb's): a full tile
// holds 256 hashes, or 256 records at the data level.
const TileHeight = 8

// recordHeader is the first line of every record.
const recordHeader = "jig-version-record v1"

// Limits on what the parsers accept, so that a hostile server or bundle
// cannot make a client allocate without bound.
const (
	// MaxRecordSize is the longest record text.
	MaxRecordSize = 8 << 10
	// MaxSigners is the most signer fingerprints a record names.
	MaxSigners = 16
	// MaxProofHashes is the most hashes an inclusion or consistency
	// proof holds (two per level of a tree of 2^63 leaves is 126).
	MaxProofHashes = 128
	// MaxCheckpointSize is the longest signed checkpoint.
	MaxCheckpointSize = 16 << 10
)

// ErrMalformed is wrapped by every parse error of this package.
var ErrMalformed = errors.New("malformed transparency log data")

// Record is one logged version: the leaf of a namespace's log.
type Record struct {
	// Namespace ("@acme"), Path ("features/ui-kit") and Version
	// ("1.2.0") name the version.
	Namespace, Path, Version string
	// IndexDigest is "sha256:<hex>" of the version's digest index
	// document as stored (GET …/<version>/digests serves those bytes).
	IndexDigest string
	// Signers are the "SHA256:…" fingerprints of the keys whose
	// signatures were stored with the version, sorted; empty for an
	// unsigned version.
	Signers []string
	// Time is when the version was logged, in UTC, to the second.
	Time time.Time
}

// ID returns "@ns/<path>@<version>".
func (r Record) ID() string { return r.Namespace + "/" + r.Path + "@" + r.Version }

// Marshal returns the record's text, the bytes its leaf hash is taken
// over:
//
//	jig-version-record v1
//	@acme/features/ui-kit@1.2.0
//	index sha256:<hex>
//	signer SHA256:<base64>      (one line per signer, sorted; none when unsigned)
//	time 2026-12-07T01:02:03Z
//
// It returns an error for a record [ParseRecord] would refuse.
func (r Record) Marshal() ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(recordHeader + "\n")
	b.WriteString(r.ID() + "\n")
	b.WriteString("index " + r.IndexDigest + "\n")
	for _, s := range r.Signers {
		b.WriteString("signer " + s + "\n")
	}
	b.WriteString("time " + r.Time.UTC().Format(time.RFC3339) + "\n")
	if b.Len() > MaxRecordSize {
		return nil, fmt.Errorf("record of %s is %d bytes, more than %d: %w", r.ID(), b.Len(), MaxRecordSize, ErrMalformed)
	}
	return b.Bytes(), nil
}

func (r Record) check() error {
	bad := func(what string) error { return fmt.Errorf("record: %s: %w", what, ErrMalformed) }
	switch {
	case !registry.ValidNamespace(r.Namespace):
		return bad("invalid namespace " + strconv.Quote(r.Namespace))
	case !registry.ValidPath(r.Path):
		return bad("invalid registry path " + strconv.Quote(r.Path))
	case !registry.ValidVersion(r.Version):
		return bad("invalid version " + strconv.Quote(r.Version))
	case !registry.ValidDigest(r.IndexDigest):
		return bad("invalid index digest " + strconv.Quote(r.IndexDigest))
	case len(r.Signers) > MaxSigners:
		return bad(fmt.Sprintf("%d signers, at most %d", len(r.Signers), MaxSigners))
	case !slices.IsSorted(r.Signers) || len(slices.Compact(slices.Clone(r.Signers))) != len(r.Signers):
		return bad("signers not sorted and unique")
	case r.Time.IsZero() || r.Time.Nanosecond() != 0 || r.Time.Year() > 9999 || r.Time.Year() < 1:
		return bad("time missing or not whole seconds")
	}
	for _, s := range r.Signers {
		if !validFingerprint(s) {
			return bad("invalid signer fingerprint " + strconv.Quote(s))
		}
	}
	return nil
}

// validFingerprint accepts ssh's "SHA256:<unpadded base64>" of a key.
func validFingerprint(f string) bool {
	b, ok := strings.CutPrefix(f, "SHA256:")
	if !ok {
		return false
	}
	raw, err := base64.RawStdEncoding.DecodeString(b)
	return err == nil && len(raw) == 32
}

// ParseRecord parses a record's text as [Record.Marshal] writes it, and
// only that: a text that does not marshal back to the same bytes is
// refused, so a leaf hash names exactly one record.
func ParseRecord(text []byte) (Record, error) {
	var r Record
	bad := func(what string) (Record, error) {
		return Record{}, fmt.Errorf("record: %s: %w", what, ErrMalformed)
	}
	if len(text) > MaxRecordSize {
		return bad("too long")
	}
	s, ok := strings.CutSuffix(string(text), "\n")
	if !ok {
		return bad("no final newline")
	}
	lines := strings.Split(s, "\n")
	if len(lines) < 4 || lines[0] != recordHeader {
		return bad("the first line is not the record header " + strconv.Quote(recordHeader))
	}
	id := lines[1]
	at := strings.LastIndexByte(id, '@')
	slash := strings.IndexByte(id, '/')
	if at <= 0 || slash <= 0 || slash > at {
		return bad("second line is not @ns/<path>@<version>")
	}
	r.Namespace, r.Path, r.Version = id[:slash], id[slash+1:at], id[at+1:]
	var found bool
	if r.IndexDigest, found = strings.CutPrefix(lines[2], "index "); !found {
		return bad("third line is not the index digest")
	}
	for _, l := range lines[3 : len(lines)-1] {
		fp, found := strings.CutPrefix(l, "signer ")
		if !found {
			return bad("unexpected line " + strconv.Quote(l))
		}
		r.Signers = append(r.Signers, fp)
	}
	ts, found := strings.CutPrefix(lines[len(lines)-1], "time ")
	if !found {
		return bad("last line is not the time")
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return bad("invalid time " + strconv.Quote(ts))
	}
	r.Time = t.UTC()
	again, err := r.Marshal()
	if err != nil {
		return Record{}, err
	}
	if !bytes.Equal(again, text) {
		return bad("not in canonical form")
	}
	return r, nil
}

// DataTile returns the content of a data tile holding records, in log
// order: each record's text followed by an empty line.
func DataTile(records [][]byte) []byte {
	var b []byte
	for _, r := range records {
		b = append(b, r...)
		b = append(b, '\n')
	}
	return b
}

// SplitDataTile splits a data tile ([DataTile]) into its records' texts.
func SplitDataTile(data []byte) ([][]byte, error) {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.Index(data, []byte("\n\n"))
		if i < 0 {
			return nil, fmt.Errorf("data tile: a record is not followed by an empty line: %w", ErrMalformed)
		}
		out = append(out, data[:i+1])
		data = data[i+2:]
	}
	return out, nil
}

// Origin returns the origin line of namespace's log checkpoints for a log
// key named keyName: "<keyName>/<namespace>". Each namespace has a log of
// its own; one key signs them all.
func Origin(keyName, namespace string) string { return keyName + "/" + namespace }

// Checkpoint is a log's tree head, the body of a signed note in the C2SP
// checkpoint format (c2sp.org/tlog-checkpoint).
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   tlog.Hash
}

// Tree returns the checkpoint's tree as package tlog takes it.
func (c Checkpoint) Tree() tlog.Tree { return tlog.Tree{N: c.Size, Hash: c.Hash} }

// String names the tree head for people: "<origin> size <n> hash <base64>".
func (c Checkpoint) String() string {
	return fmt.Sprintf("%s size %d hash %s", c.Origin, c.Size, c.Hash)
}

// Marshal returns the checkpoint body: origin, size and root hash lines.
func (c Checkpoint) Marshal() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", c.Origin, c.Size, c.Hash)
}

// ParseCheckpoint parses a checkpoint body (the text of a signed note).
// Extension lines after the hash are allowed, as the format says, and
// ignored.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	bad := func(what string) (Checkpoint, error) {
		return Checkpoint{}, fmt.Errorf("checkpoint: %s: %w", what, ErrMalformed)
	}
	if len(text) > MaxCheckpointSize {
		return bad("too long")
	}
	lines := strings.SplitN(string(text), "\n", 4)
	if len(lines) < 4 {
		return bad("fewer than three lines")
	}
	if lines[0] == "" || strings.ContainsAny(lines[0], " \t+") {
		return bad("invalid origin line")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return bad("invalid size line")
	}
	h, err := tlog.ParseHash(lines[2])
	if err != nil || h.String() != lines[2] {
		return bad("invalid root hash line")
	}
	if n == 0 && h != (tlog.Hash{}) {
		return bad("an empty tree with a root hash")
	}
	return Checkpoint{Origin: lines[0], Size: n, Hash: h}, nil
}

// OpenCheckpoint verifies a signed checkpoint with verifier (a note
// verifier key, "<name>+<hash>+<key>") and returns it. The checkpoint's
// origin must be origin.
func OpenCheckpoint(signed []byte, verifier note.Verifier, origin string) (Checkpoint, error) {
	if len(signed) > MaxCheckpointSize {
		return Checkpoint{}, fmt.Errorf("checkpoint: too long: %w", ErrMalformed)
	}
	n, err := note.Open(signed, note.VerifierList(verifier))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint of %s is not signed by log key %s: %w", origin, verifier.Name(), err)
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != origin {
		return Checkpoint{}, fmt.Errorf("checkpoint is of log %q, want %q: %w", c.Origin, origin, ErrMalformed)
	}
	return c, nil
}

// SignCheckpoint signs c with signer as a note.
func SignCheckpoint(c Checkpoint, signer note.Signer) ([]byte, error) {
	return note.Sign(&note.Note{Text: string(c.Marshal())}, signer)
}

// proofHeader is the first line of a proof in the C2SP tlog-proof format.
const proofHeader = "c2sp.org/tlog-proof@v1"

// Proof is an offline proof that a record is in a log, in the C2SP
// tlog-proof format (c2sp.org/tlog-proof): the record's index, its
// inclusion proof and the signed checkpoint the proof is against. The
// format's "extra" data carries the record's text, so a proof alone
// suffices to verify a version without the network.
type Proof struct {
	Record     []byte
	Index      int64
	Hashes     tlog.RecordProof
	Checkpoint []byte // the signed note
}

// Marshal returns the proof's text:
//
//	c2sp.org/tlog-proof@v1
//	extra <base64 of the record text>
//	index <n>
//	<base64 hash>            (one line per proof hash)
//
//	<signed checkpoint>
func (p Proof) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(proofHeader + "\n")
	b.WriteString("extra " + base64.StdEncoding.EncodeToString(p.Record) + "\n")
	fmt.Fprintf(&b, "index %d\n", p.Index)
	for _, h := range p.Hashes {
		b.WriteString(h.String() + "\n")
	}
	b.WriteString("\n")
	b.Write(p.Checkpoint)
	return b.Bytes()
}

// ParseProof parses a proof as [Proof.Marshal] writes it. It checks the
// shape only; [Proof.Verify] checks what it proves.
func ParseProof(text []byte) (Proof, error) {
	bad := func(what string) (Proof, error) {
		return Proof{}, fmt.Errorf("proof: %s: %w", what, ErrMalformed)
	}
	if len(text) > 2*MaxRecordSize+MaxCheckpointSize+MaxProofHashes*46 {
		return bad("too long")
	}
	head, cp, ok := bytes.Cut(text, []byte("\n\n"))
	if !ok {
		return bad("no empty line before the checkpoint")
	}
	lines := strings.Split(string(head), "\n")
	if len(lines) < 3 || lines[0] != proofHeader {
		return bad("not a " + proofHeader + " proof")
	}
	var p Proof
	extra, found := strings.CutPrefix(lines[1], "extra ")
	if !found {
		return bad("no record (extra line)")
	}
	rec, err := base64.StdEncoding.Strict().DecodeString(extra)
	if err != nil || len(rec) > MaxRecordSize {
		return bad("invalid extra line")
	}
	p.Record = rec
	idx, found := strings.CutPrefix(lines[2], "index ")
	n, err := strconv.ParseInt(idx, 10, 64)
	if !found || err != nil || n < 0 || strconv.FormatInt(n, 10) != idx {
		return bad("invalid index line")
	}
	p.Index = n
	if len(lines)-3 > MaxProofHashes {
		return bad("too many hashes")
	}
	for _, l := range lines[3:] {
		h, err := tlog.ParseHash(l)
		if err != nil || h.String() != l {
			return bad("invalid hash line")
		}
		p.Hashes = append(p.Hashes, h)
	}
	p.Checkpoint = cp
	return p, nil
}

// Verify checks that p proves its record is in the log of origin whose
// checkpoint verifier signed, with the tlog functions, and returns the
// record and the checkpoint.
func (p Proof) Verify(verifier note.Verifier, origin string) (Record, Checkpoint, error) {
	c, err := OpenCheckpoint(p.Checkpoint, verifier, origin)
	if err != nil {
		return Record{}, Checkpoint{}, err
	}
	r, err := ParseRecord(p.Record)
	if err != nil {
		return Record{}, Checkpoint{}, err
	}
	if p.Index >= c.Size {
		return Record{}, Checkpoint{}, fmt.Errorf("record index %d is outside the tree of size %d: %w", p.Index, c.Size, ErrNotIncluded)
	}
	if err := tlog.CheckRecord(p.Hashes, c.Size, c.Hash, p.Index, tlog.RecordHash(p.Record)); err != nil {
		return Record{}, Checkpoint{}, fmt.Errorf("record of %s at index %d is not in %s: %w", r.ID(), p.Index, c, ErrNotIncluded)
	}
	return r, c, nil
}

// ErrNotIncluded is wrapped by the error of a proof that does not prove
// inclusion.
var ErrNotIncluded = errors.New("not included in the log")

// ForkError is a checkpoint that does not extend the one remembered: the
// server showed two different histories (a split view), or rolled its
// log back.
type ForkError struct {
	Remembered, Got Checkpoint
}

func (e *ForkError) Error() string {
	what := "does not extend"
	if e.Got.Size < e.Remembered.Size {
		what = "is older than (rolled back from)"
	}
	return fmt.Sprintf("the transparency log %s forked: the tree head the server shows now (size %d, hash %s) %s the one this machine saw before (size %d, hash %s); the server is showing different histories to different clients, or was rolled back. Nothing was written. Report this to the server's operator; do not trust it until it is explained",
		e.Remembered.Origin, e.Got.Size, e.Got.Hash, what, e.Remembered.Size, e.Remembered.Hash)
}

// CheckConsistency checks that got extends remembered, with proof (a
// tlog consistency proof from remembered.Size to got.Size). It returns a
// [*ForkError] when it does not.
func CheckConsistency(remembered, got Checkpoint, proof tlog.TreeProof) error {
	fork := &ForkError{Remembered: remembered, Got: got}
	switch {
	case remembered.Origin != got.Origin:
		return fmt.Errorf("checkpoints of two logs (%q, %q) compared: %w", remembered.Origin, got.Origin, ErrMalformed)
	case got.Size < remembered.Size:
		return fork
	case got.Size == remembered.Size:
		if got.Hash != remembered.Hash {
			return fork
		}
		return nil
	case remembered.Size == 0:
		return nil
	}
	if len(proof) > MaxProofHashes || tlog.CheckTree(proof, got.Size, got.Hash, remembered.Size, remembered.Hash) != nil {
		return fork
	}
	return nil
}

// Lookup is the body of GET /log/lookup/@ns/<path>@<version>: the
// version's record, its index in the namespace's log and an offline
// proof against the log's current checkpoint, and, when the request
// named an earlier tree size (?since=N), the consistency proof from that
// size to the checkpoint's.
type Lookup struct {
	Record      string   `json:"record"`
	Index       int64    `json:"index"`
	Proof       string   `json:"proof"`
	Since       int64    `json:"since,omitempty"`
	Consistency []string `json:"consistency,omitempty"`
}

// TreeProof decodes l.Consistency.
func (l Lookup) TreeProof() (tlog.TreeProof, error) {
	if len(l.Consistency) > MaxProofHashes {
		return nil, fmt.Errorf("consistency proof of %d hashes: %w", len(l.Consistency), ErrMalformed)
	}
	p := make(tlog.TreeProof, 0, len(l.Consistency))
	for _, s := range l.Consistency {
		h, err := tlog.ParseHash(s)
		if err != nil {
			return nil, fmt.Errorf("consistency proof: %w", ErrMalformed)
		}
		p = append(p, h)
	}
	return p, nil
}

// EncodeTreeProof is the inverse of [Lookup.TreeProof].
func EncodeTreeProof(p tlog.TreeProof) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = h.String()
	}
	return out
}
