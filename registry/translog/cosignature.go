package translog

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
)

// This file holds witness cosignatures in the C2SP tlog-cosignature format
// (c2sp.org/tlog-cosignature), Ed25519 "cosignature/v1": a witness that
// checked a checkpoint extends every one it saw before adds a signature
// line to the checkpoint note. Its key ID is derived with the signature
// type byte 0x04, its signature is an 8-byte big-endian time (seconds)
// followed by the Ed25519 signature of
//
//	cosignature/v1
//	time <seconds>
//	<checkpoint body>

// algCosignatureV1 is the signature type byte of Ed25519 cosignature/v1
// keys, in key IDs and verifier keys.
const algCosignatureV1 = 0x04

// cosignatureSize is the length of a cosignature after the key ID: the
// time and the Ed25519 signature.
const cosignatureSize = 8 + ed25519.SignatureSize

// Limits on witness configuration and cosigned checkpoints.
const (
	// MaxWitnesses is the most witnesses a server or a client configures.
	MaxWitnesses = 32
	// MaxCosignatures is the most cosignatures a server attaches to a
	// checkpoint (one per configured witness).
	MaxCosignatures = MaxWitnesses
	// MaxVerifierKeySize is the longest verifier key line accepted.
	MaxVerifierKeySize = 512
)

// ErrWitness is wrapped by the errors of witness keys that do not parse.
var ErrWitness = errors.New("invalid witness key")

// CosignatureVerifier verifies the cosignatures (cosignature/v1) of one
// witness. It is a [note.Verifier], so [note.Open] with it in the
// verifier list checks that witness's signature line of a checkpoint.
type CosignatureVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

var _ note.Verifier = (*CosignatureVerifier)(nil)

// NewCosignatureVerifier parses a witness's verifier key,
// "<name>+<key ID hex>+<base64 of 0x04 || Ed25519 public key>" (a C2SP
// vkey of signature type 0x04), as [Cosigner.VerifierKey] prints it. The
// key ID must be the one the name and key derive.
func NewCosignatureVerifier(vkey string) (*CosignatureVerifier, error) {
	bad := func(what string) (*CosignatureVerifier, error) {
		return nil, fmt.Errorf("%w: %s; want \"<name>+<8 hex digits>+<base64 key>\" as `jig log witness keygen` prints it", ErrWitness, what)
	}
	if len(vkey) > MaxVerifierKeySize {
		return bad("longer than " + strconv.Itoa(MaxVerifierKeySize) + " bytes")
	}
	name, rest, ok1 := strings.Cut(vkey, "+")
	hexHash, b64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 {
		return bad("not three parts separated by +")
	}
	if !validKeyName(name) {
		return bad("the name is empty or holds spaces")
	}
	h, err := strconv.ParseUint(hexHash, 16, 32)
	if err != nil || fmt.Sprintf("%08x", h) != hexHash {
		return bad("the key ID is not 8 lowercase hex digits")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) != 1+ed25519.PublicKeySize {
		return bad("the key is not base64 of a type byte and a 32-byte Ed25519 key")
	}
	if raw[0] != algCosignatureV1 {
		if raw[0] == 1 {
			return bad("it is a note signature key (type 1, as a log key), not a cosignature/v1 witness key (type 4)")
		}
		return bad(fmt.Sprintf("signature type %#02x, want %#02x (cosignature/v1)", raw[0], algCosignatureV1))
	}
	v := &CosignatureVerifier{name: name, key: ed25519.PublicKey(raw[1:])}
	v.hash = cosignatureKeyHash(name, v.key)
	if uint32(h) != v.hash {
		return bad("the key ID does not match the name and key")
	}
	if v.String() != vkey {
		return bad("not in canonical form (line breaks or padding inside the key)")
	}
	return v, nil
}

// Name returns the witness's name.
func (v *CosignatureVerifier) Name() string { return v.name }

// KeyHash returns the witness's key ID.
func (v *CosignatureVerifier) KeyHash() uint32 { return v.hash }

// String returns the verifier key line, as [NewCosignatureVerifier]
// parses it.
func (v *CosignatureVerifier) String() string {
	return v.ID() + "+" + base64.StdEncoding.EncodeToString(append([]byte{algCosignatureV1}, v.key...))
}

// ID returns "<name>+<key ID hex>", the witness's [WitnessID].
func (v *CosignatureVerifier) ID() string { return WitnessID(v.name, v.hash) }

// WitnessID names a witness by its key name and key ID, as a signature
// line does: "<name>+<key ID as 8 hex digits>".
func WitnessID(name string, keyHash uint32) string { return fmt.Sprintf("%s+%08x", name, keyHash) }

// Verify reports whether sig (a time and an Ed25519 signature, the
// signature line's bytes after the key ID) is the witness's cosignature
// of the checkpoint body msg.
func (v *CosignatureVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != cosignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	m, err := cosignedMessage(t, msg)
	if err != nil {
		return false
	}
	return ed25519.Verify(v.key, m, sig[8:])
}

// cosignedMessage returns what a cosignature at time t of checkpoint
// body msg signs. msg must be a checkpoint.
func cosignedMessage(t uint64, msg []byte) ([]byte, error) {
	if t > math.MaxInt64 {
		return nil, fmt.Errorf("cosignature time %d out of range: %w", t, ErrMalformed)
	}
	if _, err := ParseCheckpoint(msg); err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, msg), nil
}

// cosignatureKeyHash derives a cosignature/v1 key ID:
// SHA-256(name || "\n" || 0x04 || public key)[:4].
func cosignatureKeyHash(name string, key ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write([]byte{algCosignatureV1})
	h.Write(key)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// validKeyName is the signed-note rule for key names: not empty, valid
// UTF-8, no spaces and no "+".
func validKeyName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// Cosigner makes a witness's cosignatures: a [note.Signer] whose
// signature lines are cosignature/v1, so that
//
//	note.Sign(&note.Note{Text: checkpointBody}, cosigner)
//
// returns the checkpoint with the witness's cosignature line.
type Cosigner struct {
	v   CosignatureVerifier
	key ed25519.PrivateKey
	now func() time.Time
}

var _ note.Signer = (*Cosigner)(nil)

// cosignerKeyPrefix starts a cosigner's secret key line.
const cosignerKeyPrefix = "PRIVATE+KEY+"

// NewCosigner parses a witness's secret key,
// "PRIVATE+KEY+<name>+<key ID hex>+<base64 of 0x04 || Ed25519 seed>", as
// [GenerateCosignerKey] writes it. It cosigns at the current time.
func NewCosigner(skey string) (*Cosigner, error) {
	bad := func(what string) (*Cosigner, error) {
		return nil, fmt.Errorf("%w: %s; want the secret key file `jig log witness keygen` wrote", ErrWitness, what)
	}
	skey = strings.TrimSpace(skey)
	rest, ok := strings.CutPrefix(skey, cosignerKeyPrefix)
	if !ok {
		return bad("not a secret key (PRIVATE+KEY+…)")
	}
	parts := strings.SplitN(rest, "+", 3)
	if len(parts) != 3 || !validKeyName(parts[0]) {
		return bad("not <name>+<key ID>+<key> after PRIVATE+KEY+")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(parts[2])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != algCosignatureV1 || base64.StdEncoding.EncodeToString(raw) != parts[2] {
		return bad("not a cosignature/v1 Ed25519 key (type 4)")
	}
	s := NewCosignerFromKey(parts[0], ed25519.NewKeyFromSeed(raw[1:]))
	if h, err := strconv.ParseUint(parts[1], 16, 32); err != nil || len(parts[1]) != 8 || uint32(h) != s.v.hash {
		return bad("the key ID does not match the name and key")
	}
	return s, nil
}

// NewCosignerFromKey returns the cosigner of witness name with Ed25519
// key. name must be a valid key name (no spaces, no "+").
func NewCosignerFromKey(name string, key ed25519.PrivateKey) *Cosigner {
	pub := key.Public().(ed25519.PublicKey)
	return &Cosigner{v: CosignatureVerifier{name: name, hash: cosignatureKeyHash(name, pub), key: pub}, key: key, now: time.Now}
}

// GenerateCosignerKey makes a new witness key named name from rand and
// returns its secret key line (for [NewCosigner]) and its verifier key
// line (for [NewCosignatureVerifier]).
func GenerateCosignerKey(rand io.Reader, name string) (skey, vkey string, err error) {
	if !validKeyName(name) {
		return "", "", fmt.Errorf("%w: the name %q is empty or holds spaces or +; use e.g. witness.example.com", ErrWitness, name)
	}
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return "", "", err
	}
	s := NewCosignerFromKey(name, priv)
	skey = cosignerKeyPrefix + s.v.ID() + "+" + base64.StdEncoding.EncodeToString(append([]byte{algCosignatureV1}, priv.Seed()...))
	return skey, s.v.String(), nil
}

// At returns a copy of s that cosigns at time t (whole seconds), for
// tests and for a witness that records when it checked.
func (s *Cosigner) At(t time.Time) *Cosigner {
	c := *s
	c.now = func() time.Time { return t }
	return &c
}

// Name returns the witness's name.
func (s *Cosigner) Name() string { return s.v.name }

// KeyHash returns the witness's key ID.
func (s *Cosigner) KeyHash() uint32 { return s.v.hash }

// Verifier returns the witness's verifier.
func (s *Cosigner) Verifier() *CosignatureVerifier { v := s.v; return &v }

// VerifierKey returns the witness's verifier key line.
func (s *Cosigner) VerifierKey() string { return s.v.String() }

// Sign cosigns the checkpoint body msg: the time, then the Ed25519
// signature. msg must be a checkpoint.
func (s *Cosigner) Sign(msg []byte) ([]byte, error) {
	t := s.now().Unix()
	if t < 0 {
		return nil, errors.New("cosigner: the time is before 1970")
	}
	m, err := cosignedMessage(uint64(t), msg)
	if err != nil {
		return nil, err
	}
	sig := binary.BigEndian.AppendUint64(make([]byte, 0, cosignatureSize), uint64(t))
	return append(sig, ed25519.Sign(s.key, m)...), nil
}

// CosignatureTime returns the time a cosignature line (a signature of a
// note as [note.Open] returns it) says it was made.
func CosignatureTime(sig note.Signature) (time.Time, error) {
	raw, err := base64.StdEncoding.DecodeString(sig.Base64)
	if err != nil || len(raw) != 4+cosignatureSize {
		return time.Time{}, fmt.Errorf("cosignature of %s: %w", sig.Name, ErrMalformed)
	}
	t := binary.BigEndian.Uint64(raw[4:])
	if t > math.MaxInt64 {
		return time.Time{}, fmt.Errorf("cosignature of %s: time out of range: %w", sig.Name, ErrMalformed)
	}
	return time.Unix(int64(t), 0).UTC(), nil
}

// MaxCosignatureBody bounds the body of POST /log/@ns/cosignature: a
// checkpoint and a few signature lines.
const MaxCosignatureBody = 4 << 10

// CosignatureResult is the answer of POST /log/@ns/cosignature, by which
// a witness gives the server its cosignature of a checkpoint.
type CosignatureResult struct {
	// Log is the log's origin, Size the size of the tree cosigned.
	Log  string `json:"log"`
	Size int64  `json:"size"`
	// Witnesses name the witnesses whose cosignatures were taken.
	Witnesses []string `json:"witnesses"`
	// Current is whether the tree cosigned is the log's current one:
	// its cosignatures are then served with the checkpoint.
	Current bool `json:"current"`
}

// WitnessPolicy is a client's witness requirement for a log: at least
// Min of Witnesses (distinct witnesses) must have cosigned a checkpoint
// for the client to accept it. The zero policy requires nothing.
type WitnessPolicy struct {
	Witnesses []*CosignatureVerifier
	Min       int
}

// NewWitnessPolicy parses the witnesses' verifier keys and checks that
// min is between 1 and their number, that no witness is listed twice and
// that there are at most [MaxWitnesses]. No witnesses and min 0 is the
// zero policy.
func NewWitnessPolicy(vkeys []string, min int) (WitnessPolicy, error) {
	if len(vkeys) == 0 && min == 0 {
		return WitnessPolicy{}, nil
	}
	if len(vkeys) > MaxWitnesses {
		return WitnessPolicy{}, fmt.Errorf("%w: %d witnesses, at most %d", ErrWitness, len(vkeys), MaxWitnesses)
	}
	if min < 1 || min > len(vkeys) {
		return WitnessPolicy{}, fmt.Errorf("%w: at least %d of %d witnesses required; the minimum must be between 1 and the number of witnesses", ErrWitness, min, len(vkeys))
	}
	p := WitnessPolicy{Min: min}
	seen := map[string]bool{}
	for _, k := range vkeys {
		v, err := NewCosignatureVerifier(strings.TrimSpace(k))
		if err != nil {
			return WitnessPolicy{}, err
		}
		id := v.ID()
		if seen[id] {
			return WitnessPolicy{}, fmt.Errorf("%w: witness %s listed twice", ErrWitness, id)
		}
		seen[id] = true
		p.Witnesses = append(p.Witnesses, v)
	}
	return p, nil
}

// WitnessError refuses a checkpoint that fewer than the required
// witnesses cosigned.
type WitnessError struct {
	// Checkpoint is the tree head refused.
	Checkpoint Checkpoint
	// Valid is how many distinct configured witnesses cosigned it, Min
	// how many are required, Of how many are configured.
	Valid, Min, Of int
}

// Namespace returns the namespace of the log refused (the origin's last
// part, "@acme").
func (e *WitnessError) Namespace() string {
	return e.Checkpoint.Origin[strings.LastIndexByte(e.Checkpoint.Origin, '/')+1:]
}

func (e *WitnessError) Error() string {
	return fmt.Sprintf("the tree head of %s (size %d) carries valid cosignatures of %d of the %d trusted witnesses, and %d are required; the witnesses have not (yet) checked it, or the server shows you a tree they never saw",
		e.Checkpoint.Origin, e.Checkpoint.Size, e.Valid, e.Of, e.Min)
}

// Check counts the distinct witnesses of p that cosigned the signed
// checkpoint note signed (whose body is cp), and returns a
// [*WitnessError] when they are fewer than p.Min. A signature line of a
// witness that does not verify is not counted (it is not an error: the
// server may attach what it likes; only valid ones count).
func (p WitnessPolicy) Check(signed []byte, cp Checkpoint) (int, error) {
	if p.Min == 0 {
		return 0, nil
	}
	if len(signed) > MaxCheckpointSize {
		return 0, fmt.Errorf("checkpoint: too long: %w", ErrMalformed)
	}
	// With no verifiers, note.Open parses the note (within its limits)
	// and returns every signature line unverified.
	_, err := note.Open(signed, note.VerifierList())
	var un *note.UnverifiedNoteError
	if !errors.As(err, &un) {
		return 0, fmt.Errorf("checkpoint of %s: %w", cp.Origin, ErrMalformed)
	}
	n := un.Note
	if string(cp.Marshal()) != n.Text {
		return 0, fmt.Errorf("checkpoint of %s: the note is not of this tree head: %w", cp.Origin, ErrMalformed)
	}
	valid := 0
	counted := make([]bool, len(p.Witnesses))
	for _, s := range n.UnverifiedSigs {
		for i, w := range p.Witnesses {
			if counted[i] || s.Name != w.name || s.Hash != w.hash {
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(s.Base64)
			if err == nil && len(raw) > 4 && w.Verify([]byte(n.Text), raw[4:]) {
				counted[i] = true
				valid++
			}
		}
	}
	if valid < p.Min {
		return valid, &WitnessError{Checkpoint: cp, Valid: valid, Min: p.Min, Of: len(p.Witnesses)}
	}
	return valid, nil
}
