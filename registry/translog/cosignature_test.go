package translog_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry/translog"
)

// torchwoodVector is a cosigned checkpoint made by filippo.io/torchwood
// v0.6.1's CosignatureSigner (an independent implementation of
// c2sp.org/tlog-cosignature) with the Ed25519 seed 00 01 … 1f, on the
// spec's example checkpoint.
const (
	torchwoodVKey   = "witness.example.com/w1+a0059f11+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4"
	torchwoodBody   = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
	torchwoodSigned = torchwoodBody + "\n— witness.example.com/w1 oAWfEQAAAABrFqRRSmR/sZjysTTQ3ogRRtA7ajnD5S3E6alZ9F6CsMArt5s3kZpcJAcXsAwKsiNI6yTcefg606mcoqg4YpiRYa8kBQ==\n"
)

func vectorSeedKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// TestCosignatureInterop checks both directions against torchwood: its
// cosignature verifies with this package's verifier (note.Open), and
// this package derives the same verifier key and key ID from the same
// key.
func TestCosignatureInterop(t *testing.T) {
	t.Parallel()
	v, err := translog.NewCosignatureVerifier(torchwoodVKey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(torchwoodSigned), note.VerifierList(v))
	if err != nil || len(n.Sigs) != 1 || n.Text != torchwoodBody {
		t.Fatalf("note.Open(torchwood's cosignature) = %+v, %v; want one verified signature", n, err)
	}
	when, err := translog.CosignatureTime(n.Sigs[0])
	if want := time.Date(2026, 12, 7, 12, 19, 29, 0, time.UTC); err != nil || !when.Equal(want) {
		t.Fatalf("CosignatureTime = %v, %v; want %v (when the vector was made)", when, err, want)
	}
	s := translog.NewCosignerFromKey("witness.example.com/w1", vectorSeedKey())
	if got := s.VerifierKey(); got != torchwoodVKey {
		t.Fatalf("VerifierKey() = %q, want torchwood's %q", got, torchwoodVKey)
	}
	// Ed25519 is deterministic: at the vector's time, the same bytes.
	again, err := note.Sign(&note.Note{Text: torchwoodBody}, s.At(when))
	if err != nil || string(again) != torchwoodSigned {
		t.Fatalf("cosigning the vector's checkpoint at its time = %q, %v; want torchwood's %q", again, err, torchwoodSigned)
	}
}

func TestCosignatureAcceptedAndRefused(t *testing.T) {
	t.Parallel()
	logSigner, logVerifier := newKey(t)
	cp := translog.Checkpoint{Origin: "log.example/@acme", Size: 3, Hash: tlog.Hash{1, 2, 3}}
	signed, err := translog.SignCheckpoint(cp, logSigner)
	if err != nil {
		t.Fatal(err)
	}
	skey, vkey, err := translog.GenerateCosignerKey(rand.Reader, "witness.example/w1")
	if err != nil {
		t.Fatal(err)
	}
	w, err := translog.NewCosigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	if w.VerifierKey() != vkey {
		t.Fatalf("the secret key's verifier %q, want the printed %q", w.VerifierKey(), vkey)
	}
	wv, _ := translog.NewCosignatureVerifier(vkey)
	_, otherV, _ := translog.GenerateCosignerKey(rand.Reader, "witness.example/w1")
	other, _ := translog.NewCosignatureVerifier(otherV)
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	cosigned, err := note.Sign(&note.Note{Text: string(cp.Marshal())}, w.At(at))
	if err != nil {
		t.Fatal(err)
	}
	line := cosigned[bytes.LastIndex(cosigned, []byte("\n\n"))+2:]
	full := append(bytes.Clone(signed), line...)

	// The log key and the witness together: both lines verify.
	n, err := note.Open(full, note.VerifierList(logVerifier, wv))
	if err != nil || len(n.Sigs) != 2 {
		t.Fatalf("note.Open(log and witness) = %+v, %v; want two verified signatures", n, err)
	}
	if got, err := translog.CosignatureTime(n.Sigs[1]); err != nil || !got.Equal(at) {
		t.Fatalf("CosignatureTime = %v, %v; want %v", got, err, at)
	}

	// Tampered lines: another time, another body, another key.
	sig := line[strings.LastIndexByte(string(line[:len(line)-1]), ' ')+1 : len(line)-1]
	raw, _ := decodeB64(string(sig))
	raw[4+7]++ // the time's last byte
	wrongTime := append(bytes.Clone(signed), fmt.Sprintf("— witness.example/w1 %s\n", encodeB64(raw))...)
	otherBody := translog.Checkpoint{Origin: cp.Origin, Size: 4, Hash: cp.Hash}
	otherSigned, _ := translog.SignCheckpoint(otherBody, logSigner)
	wrongBody := append(bytes.Clone(otherSigned), line...)
	for name, c := range map[string]struct {
		note []byte
		v    note.Verifier
	}{
		"wrong time": {wrongTime, wv},
		"wrong body": {wrongBody, wv},
	} {
		if _, err := note.Open(c.note, note.VerifierList(logVerifier, c.v)); err == nil {
			t.Errorf("%s: note.Open accepted it", name)
		}
	}
	// Another key of the same name: its key ID differs, so the line is
	// not its signature (unverified, not accepted).
	n, err = note.Open(full, note.VerifierList(logVerifier, other))
	if err != nil || len(n.Sigs) != 1 || len(n.UnverifiedSigs) != 1 {
		t.Errorf("note.Open with another witness key = %+v, %v; want only the log's signature verified", n, err)
	}

	// The k-of-n policy counts only valid cosignatures of distinct
	// configured witnesses.
	_, v2key, _ := translog.GenerateCosignerKey(rand.Reader, "witness.example/w2")
	for _, c := range []struct {
		name  string
		note  []byte
		vkeys []string
		min   int
		valid int
		ok    bool
	}{
		{"one of one", full, []string{vkey}, 1, 1, true},
		{"one of two, two required", full, []string{vkey, v2key}, 2, 1, false},
		{"uncosigned", signed, []string{vkey}, 1, 0, false},
		{"tampered time is not counted", wrongTime, []string{vkey}, 1, 0, false},
		{"a line twice counts once", append(bytes.Clone(full), line...), []string{vkey, v2key}, 2, 1, false},
		{"another key of the same name", full, []string{otherV}, 1, 0, false},
	} {
		p, err := translog.NewWitnessPolicy(c.vkeys, c.min)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		valid, err := p.Check(c.note, cp)
		var we *translog.WitnessError
		if valid != c.valid || (err == nil) != c.ok || (!c.ok && !errors.As(err, &we)) {
			t.Errorf("%s: Check = %d, %v; want %d valid, ok %v", c.name, valid, err, c.valid, c.ok)
		}
	}
	// A note that is not of the tree head given is malformed.
	p, _ := translog.NewWitnessPolicy([]string{vkey}, 1)
	if _, err := p.Check(wrongBody, cp); !errors.Is(err, translog.ErrMalformed) {
		t.Errorf("Check(a note of another tree) = %v, want ErrMalformed", err)
	}
}

func TestNewWitnessPolicyRefuses(t *testing.T) {
	t.Parallel()
	_, v1, _ := translog.GenerateCosignerKey(rand.Reader, "w1")
	for _, c := range []struct {
		name  string
		vkeys []string
		min   int
		want  string
	}{
		{"min zero with witnesses", []string{v1}, 0, "between 1 and the number"},
		{"min above n", []string{v1}, 2, "at least 2 of 1"},
		{"min without witnesses", nil, 1, "at least 1 of 0"},
		{"twice", []string{v1, v1}, 1, "listed twice"},
		{"not a key", []string{"nope"}, 1, "not three parts"},
	} {
		if _, err := translog.NewWitnessPolicy(c.vkeys, c.min); !errors.Is(err, translog.ErrWitness) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewWitnessPolicy = %v, want an ErrWitness saying %q", c.name, err, c.want)
		}
	}
}

func TestNewCosignatureVerifierRefuses(t *testing.T) {
	t.Parallel()
	_, logVKey, _ := note.GenerateKey(rand.Reader, "log.example")
	good := torchwoodVKey
	name, rest, _ := strings.Cut(good, "+")
	hash, key, _ := strings.Cut(rest, "+")
	for _, c := range []struct {
		name, vkey, want string
	}{
		{"empty", "", "not three parts"},
		{"two parts", name + "+" + hash, "not three parts"},
		{"space in name", "a b+" + hash + "+" + key, "name is empty or holds spaces"},
		{"empty name", "+" + hash + "+" + key, "name is empty"},
		{"short key ID", name + "+a005+" + key, "8 hex digits"},
		{"key ID of another name", "witness.example.com/w2+" + hash + "+" + key, "does not match"},
		{"not base64", name + "+" + hash + "+!!", "not base64"},
		{"a log key (type 1)", logVKey, "note signature key (type 1"},
		{"type 5", name + "+" + hash + "+" + encodeB64(append([]byte{5}, make([]byte, 32)...)), "signature type 0x05"},
		{"huge", strings.Repeat("a", 600), "longer than"},
	} {
		if _, err := translog.NewCosignatureVerifier(c.vkey); !errors.Is(err, translog.ErrWitness) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewCosignatureVerifier(%q) = %v, want an ErrWitness saying %q", c.name, c.vkey, err, c.want)
		}
	}
}

func TestNewCosignerRefuses(t *testing.T) {
	t.Parallel()
	logSKey, _, _ := note.GenerateKey(rand.Reader, "log.example")
	skey, _, _ := translog.GenerateCosignerKey(rand.Reader, "w1")
	for name, k := range map[string]string{
		"empty":             "",
		"a verifier key":    torchwoodVKey,
		"a log key":         logSKey,
		"key ID mismatched": strings.Replace(skey, "+w1+", "+w2+", 1),
	} {
		if _, err := translog.NewCosigner(k); !errors.Is(err, translog.ErrWitness) {
			t.Errorf("%s: NewCosigner = %v, want ErrWitness", name, err)
		}
	}
	if _, _, err := translog.GenerateCosignerKey(rand.Reader, "a b"); !errors.Is(err, translog.ErrWitness) {
		t.Errorf("GenerateCosignerKey(\"a b\") = %v, want ErrWitness", err)
	}
	// Signing anything but a checkpoint is refused.
	w, _ := translog.NewCosigner(skey)
	if _, err := note.Sign(&note.Note{Text: "not a checkpoint\n"}, w); err == nil {
		t.Error("cosigned a note that is not a checkpoint")
	}
}

// FuzzCosignatureVerifier: a witness verifier key that parses prints
// back as the same line, and no input panics.
func FuzzCosignatureVerifier(f *testing.F) {
	seeds, err := os.ReadFile("testdata/witness-vkeys.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(seeds), "\n") {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, vkey string) {
		v, err := translog.NewCosignatureVerifier(vkey)
		if err != nil {
			if !errors.Is(err, translog.ErrWitness) {
				t.Fatalf("error %v does not wrap ErrWitness", err)
			}
			return
		}
		if v.String() != vkey {
			t.Fatalf("String() = %q, want the parsed %q", v.String(), vkey)
		}
		if strings.ContainsAny(v.Name(), " \t\n+") || v.Name() == "" {
			t.Fatalf("accepted name %q", v.Name())
		}
	})
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
func encodeB64(b []byte) string          { return base64.StdEncoding.EncodeToString(b) }

// FuzzWitnessCheck: on any note, WitnessPolicy.Check counts a witness
// exactly when one of its signature lines verifies with note.Open, agrees
// with note.Open on the notes it accepts, and no input panics.
func FuzzWitnessCheck(f *testing.F) {
	f.Add([]byte(torchwoodSigned))
	f.Add([]byte(torchwoodSigned + strings.Split(torchwoodSigned, "\n\n")[1]))
	f.Add([]byte(torchwoodBody + "\n— witness.example.com/w1 oAWfEQAAAA==\n"))
	f.Add([]byte("x\n\n— a AAAAAAA=\n"))
	v, err := translog.NewCosignatureVerifier(torchwoodVKey)
	if err != nil {
		f.Fatal(err)
	}
	p, err := translog.NewWitnessPolicy([]string{torchwoodVKey}, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, signed []byte) {
		// The note's text and signature block, split as note.Open does.
		i := bytes.LastIndex(signed, []byte("\n\n"))
		if i < 0 {
			return
		}
		text, sigs := signed[:i+1], signed[i+2:]
		cp, err := translog.ParseCheckpoint(text)
		if err != nil {
			return
		}
		valid, err := p.Check(signed, cp)
		_, perr := note.Open(signed, note.VerifierList())
		if _, ok := errors.AsType[*note.UnverifiedNoteError](perr); !ok || string(cp.Marshal()) != string(text) {
			// A note note.Open cannot parse, or a checkpoint with
			// extension lines (not one of jig's logs): never counted.
			if valid != 0 || !errors.Is(err, translog.ErrMalformed) {
				t.Fatalf("Check(a note of another form) = %d, %v; want ErrMalformed", valid, err)
			}
			return
		}
		if valid < 0 || valid > 1 {
			t.Fatalf("Check = %d valid of 1 witness", valid)
		}
		if (err == nil) != (valid == 1) {
			t.Fatalf("Check = %d, %v", valid, err)
		}
		if n, err := note.Open(signed, note.VerifierList(v)); err == nil && len(n.Sigs) != valid {
			t.Fatalf("note.Open verified %d lines of the witness, Check counted %d", len(n.Sigs), valid)
		}
		// Check counts the witness exactly when one of its lines alone
		// verifies with note.Open (a bad line before a good one does
		// not hide it).
		alone := false
		for _, line := range bytes.SplitAfter(sigs, []byte("\n")) {
			if n, err := note.Open(append(append(bytes.Clone(text), '\n'), line...), note.VerifierList(v)); err == nil && len(n.Sigs) == 1 {
				alone = true
			}
		}
		if alone != (valid == 1) {
			t.Fatalf("Check counted %d; a line of the witness alone verifies: %v", valid, alone)
		}
	})
}
