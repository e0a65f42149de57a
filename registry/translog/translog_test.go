package translog_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
)

var sampleRecord = translog.Record{
	Namespace: "@acme", Path: "features/ui-kit", Version: "1.2.0",
	IndexDigest: registry.Digest([]byte("index")),
	Signers:     []string{"SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"},
	Time:        time.Date(2026, 12, 7, 1, 2, 3, 0, time.UTC),
}

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	text, err := sampleRecord.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "jig-version-record v1\n@acme/features/ui-kit@1.2.0\nindex " + sampleRecord.IndexDigest +
		"\nsigner SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU\ntime 2026-12-07T01:02:03Z\n"
	if string(text) != want {
		t.Fatalf("Marshal = %q, want %q", text, want)
	}
	r, err := translog.ParseRecord(text)
	if err != nil || r.ID() != sampleRecord.ID() || !r.Time.Equal(sampleRecord.Time) || len(r.Signers) != 1 {
		t.Fatalf("ParseRecord = %+v, %v", r, err)
	}
}

func TestParseRecordRefuses(t *testing.T) {
	t.Parallel()
	good, _ := sampleRecord.Marshal()
	for name, text := range map[string]string{
		"no final newline":  strings.TrimSuffix(string(good), "\n"),
		"other header":      strings.Replace(string(good), "v1", "v2", 1),
		"bad namespace":     strings.Replace(string(good), "@acme", "@ACME", 1),
		"path escape":       strings.Replace(string(good), "features/ui-kit", "../ui-kit", 1),
		"bad version":       strings.Replace(string(good), "1.2.0", "1.2", 1),
		"uppercase digest":  strings.Replace(string(good), "sha256:", "SHA256:", 1),
		"unsorted signers":  strings.Replace(string(good), "signer ", "signer SHA256:zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\nsigner ", 1),
		"bad fingerprint":   strings.Replace(string(good), "SHA256:47", "SHA256:4", 1),
		"time with zone":    strings.Replace(string(good), "03Z", "03+01:00", 1),
		"extra line":        strings.Replace(string(good), "time ", "note x\ntime ", 1),
		"empty":             "",
		"windows newlines":  strings.ReplaceAll(string(good), "\n", "\r\n"),
		"blank line inside": strings.Replace(string(good), "\ntime", "\n\ntime", 1),
	} {
		if _, err := translog.ParseRecord([]byte(text)); !errors.Is(err, translog.ErrMalformed) {
			t.Errorf("%s: ParseRecord = %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzParseRecord: whatever parses marshals back to the same bytes (a
// leaf hash names one record), holds no blank line (records split data
// tiles on blank lines) and names a valid version.
func FuzzParseRecord(f *testing.F) {
	good, _ := sampleRecord.Marshal()
	f.Add(good)
	unsigned := sampleRecord
	unsigned.Signers = nil
	b, _ := unsigned.Marshal()
	f.Add(b)
	f.Fuzz(func(t *testing.T, text []byte) {
		r, err := translog.ParseRecord(text)
		if err != nil {
			return
		}
		again, err := r.Marshal()
		if err != nil || !bytes.Equal(again, text) {
			t.Fatalf("round trip: %q -> %q, %v", text, again, err)
		}
		if bytes.Contains(text, []byte("\n\n")) || !registry.ValidPath(r.Path) || !registry.ValidNamespace(r.Namespace) {
			t.Fatalf("accepted %q", text)
		}
		tiles, err := translog.SplitDataTile(translog.DataTile([][]byte{text, text}))
		if err != nil || len(tiles) != 2 || !bytes.Equal(tiles[1], text) {
			t.Fatalf("data tile of %q splits into %q, %v", text, tiles, err)
		}
	})
}

func newKey(t testing.TB) (note.Signer, note.Verifier) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "log.example")
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// tree builds a log of n records in memory with tlog and returns its
// hashes, its records and their stored hashes.
type memTree struct {
	records [][]byte
	hashes  []tlog.Hash
}

func (m *memTree) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = m.hashes[x]
	}
	return out, nil
}

func (m *memTree) add(t testing.TB, text []byte) {
	hs, err := tlog.StoredHashes(int64(len(m.records)), text, m)
	if err != nil {
		t.Fatal(err)
	}
	m.records = append(m.records, text)
	m.hashes = append(m.hashes, hs...)
}

func (m *memTree) checkpoint(t testing.TB, n int64) translog.Checkpoint {
	h, err := tlog.TreeHash(n, m)
	if err != nil {
		t.Fatal(err)
	}
	return translog.Checkpoint{Origin: "log.example/@acme", Size: n, Hash: h}
}

func TestProofVerifyAndConsistency(t *testing.T) {
	t.Parallel()
	signer, verifier := newKey(t)
	var m memTree
	for i := range 20 {
		r := sampleRecord
		r.Version = "1.0." + string(rune('0'+i%10))
		if i >= 10 {
			r.Path = "other"
		}
		text, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		m.add(t, text)
	}
	cp := m.checkpoint(t, 20)
	signed, err := translog.SignCheckpoint(cp, signer)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := tlog.ProveRecord(20, 7, &m)
	if err != nil {
		t.Fatal(err)
	}
	p := translog.Proof{Record: m.records[7], Index: 7, Hashes: rp, Checkpoint: signed}
	parsed, err := translog.ParseProof(p.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	r, got, err := parsed.Verify(verifier, "log.example/@acme")
	if err != nil || got != cp || r.Version != "1.0.7" {
		t.Fatalf("Verify = %+v, %v, %v", r, got, err)
	}
	// Another origin, another index, another key: refused.
	if _, _, err := parsed.Verify(verifier, "log.example/@other"); err == nil {
		t.Error("Verify accepted the checkpoint of another origin")
	}
	wrong := parsed
	wrong.Index = 8
	if _, _, err := wrong.Verify(verifier, "log.example/@acme"); !errors.Is(err, translog.ErrNotIncluded) {
		t.Errorf("Verify at the wrong index = %v, want ErrNotIncluded", err)
	}
	_, other := newKey(t)
	if _, _, err := parsed.Verify(other, "log.example/@acme"); err == nil {
		t.Error("Verify accepted a checkpoint signed by another key")
	}

	// Consistency: the tree at 20 extends the one at 13; a tree whose
	// leaf 5 differs does not; nor does a smaller one.
	old := m.checkpoint(t, 13)
	tp, err := tlog.ProveTree(20, 13, &m)
	if err != nil {
		t.Fatal(err)
	}
	var forked memTree
	for i, rec := range m.records {
		if i == 5 {
			rec = bytes.Replace(rec, []byte("1.0.5"), []byte("9.0.5"), 1)
		}
		forked.add(t, rec)
	}
	ftp, _ := tlog.ProveTree(20, 13, &forked)
	for _, c := range []struct {
		name       string
		old, new   translog.Checkpoint
		proof      tlog.TreeProof
		wantForked bool
	}{
		{"extends", old, cp, tp, false},
		{"same", cp, cp, nil, false},
		{"from empty", translog.Checkpoint{Origin: cp.Origin}, cp, nil, false},
		{"forked after", old, forked.checkpoint(t, 20), ftp, true},
		{"forked, proof of the other tree", old, forked.checkpoint(t, 20), tp, true},
		{"same size, other hash", cp, forked.checkpoint(t, 20), nil, true},
		{"rolled back", cp, old, nil, true},
	} {
		err := translog.CheckConsistency(c.old, c.new, c.proof)
		var fe *translog.ForkError
		if errors.As(err, &fe) != c.wantForked || (!c.wantForked && err != nil) {
			t.Errorf("%s: CheckConsistency = %v, want forked %v", c.name, err, c.wantForked)
		}
	}
}

// FuzzParseProof: a parsed proof marshals back to the same bytes, and
// never holds more than the limits allow.
func FuzzParseProof(f *testing.F) {
	signer, _ := newKey(f)
	text, _ := sampleRecord.Marshal()
	signed, _ := translog.SignCheckpoint(translog.Checkpoint{Origin: "log.example/@acme", Size: 1, Hash: tlog.RecordHash(text)}, signer)
	f.Add(translog.Proof{Record: text, Index: 0, Checkpoint: signed}.Marshal())
	f.Add(translog.Proof{Record: text, Index: 3, Hashes: tlog.RecordProof{tlog.RecordHash(text), {}}, Checkpoint: signed}.Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := translog.ParseProof(b)
		if err != nil {
			return
		}
		if len(p.Hashes) > translog.MaxProofHashes || len(p.Record) > translog.MaxRecordSize || p.Index < 0 {
			t.Fatalf("accepted beyond the limits: %d hashes, %d-byte record", len(p.Hashes), len(p.Record))
		}
		if again := p.Marshal(); !bytes.Equal(again, b) {
			t.Fatalf("round trip %q -> %q", b, again)
		}
	})
}

// FuzzParseCheckpoint: a parsed checkpoint's body starts with what it
// marshals to.
func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("log.example/@acme\n2\n" + tlog.Hash{1}.String() + "\n"))
	f.Add([]byte("log.example/@acme\n0\n" + tlog.Hash{}.String() + "\nextension\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := translog.ParseCheckpoint(b)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(b, c.Marshal()) || c.Size < 0 {
			t.Fatalf("%q parsed as %+v", b, c)
		}
	})
}
