package signing

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/internal/wildcard"
)

// MaxAllowedSignersSize bounds the allowed_signers data
// [ParseAllowedSigners] accepts: 1 MiB, thousands of keys.
const MaxAllowedSignersSize = 1 << 20

// AllowedSigners is a list of trusted keys, from an OpenSSH allowed_signers
// file ([ParseAllowedSigners]) or built with [AllowedSigners.Add]. The zero
// value (or nil) trusts no key. It is not safe for concurrent Add; Verify,
// Find and Entries may be called concurrently once it is built.
type AllowedSigners struct {
	entries []Entry
}

// Entry is one line of an allowed_signers file: a key, the principals it
// stands for and the limits on it.
type Entry struct {
	// Principals is the principals field as written: one name
	// ("alice@example.com") or a comma-separated list of names and
	// patterns.
	Principals string
	// Key is the trusted public key and Fingerprint its "SHA256:..."
	// fingerprint.
	Key         ssh.PublicKey
	Fingerprint string
	// Namespaces is the namespaces="..." pattern list, "" when the line
	// does not limit namespaces.
	Namespaces string
	// ValidAfter and ValidBefore are the valid-after and valid-before
	// limits; the zero time means no limit.
	ValidAfter, ValidBefore time.Time
	// Line is the 1-based line number in the parsed data, 0 for an entry
	// added with [AllowedSigners.Add].
	Line int
}

// Signer is who made a trusted signature: the principals of the
// allowed_signers line that lists the key, and the key.
type Signer struct {
	// Principal is the principals field of the line ("alice@example.com").
	Principal string
	// Fingerprint is the key's "SHA256:..." fingerprint.
	Fingerprint string
	Key         ssh.PublicKey
}

// Add trusts key for principal in every namespace, without time limits.
func (a *AllowedSigners) Add(principal string, key ssh.PublicKey) {
	a.entries = append(a.entries, Entry{Principals: principal, Key: key, Fingerprint: ssh.FingerprintSHA256(key)})
}

// Entries returns the entries in file order. The slice is a copy.
func (a *AllowedSigners) Entries() []Entry {
	if a == nil {
		return nil
	}
	return append([]Entry(nil), a.entries...)
}

// Find returns the first entry listing key, whatever its limits; ok is
// false when no entry lists it.
func (a *AllowedSigners) Find(key ssh.PublicKey) (e Entry, ok bool) {
	if a == nil || key == nil {
		return Entry{}, false
	}
	want := key.Marshal()
	for _, e := range a.entries {
		if bytes.Equal(e.Key.Marshal(), want) {
			return e, true
		}
	}
	return Entry{}, false
}

// Verify checks that sig is a valid signature over index ([Signature.Verify])
// and that an entry lists its key for [Namespace] at now, as ssh-keygen -Y
// verify does. It returns the first such entry as a [Signer]. A signature
// that does not verify is [ErrBadSignature]; a valid one by a key no entry
// accepts is an [*UntrustedError].
func (a *AllowedSigners) Verify(index []byte, sig *Signature, now time.Time) (Signer, error) {
	if err := sig.Verify(index); err != nil {
		return Signer{}, err
	}
	want := sig.Key.Marshal()
	reason := "it is not listed in the allowed signers"
	for _, e := range a.Entries() {
		if !bytes.Equal(e.Key.Marshal(), want) {
			continue
		}
		why, ok := e.Allows(now)
		if ok {
			return Signer{Principal: e.Principals, Fingerprint: e.Fingerprint, Key: e.Key}, nil
		}
		reason = why
	}
	return Signer{}, &UntrustedError{Fingerprint: sig.Fingerprint, Reason: reason}
}

// Allows reports whether e accepts a signature in namespace [Namespace] at
// now (its namespaces and validity); when it does not, reason says why.
func (e Entry) Allows(now time.Time) (reason string, ok bool) {
	switch {
	case e.Namespaces != "" && !matchList(Namespace, e.Namespaces):
		return fmt.Sprintf("%s lists it only for namespaces %q, not %s", e.where(), e.Namespaces, Namespace), false
	case !e.ValidAfter.IsZero() && now.Before(e.ValidAfter):
		return fmt.Sprintf("%s lists it as valid only after %s", e.where(), e.ValidAfter.UTC().Format(time.RFC3339)), false
	case !e.ValidBefore.IsZero() && now.After(e.ValidBefore):
		return fmt.Sprintf("%s lists it as valid only before %s (expired)", e.where(), e.ValidBefore.UTC().Format(time.RFC3339)), false
	}
	return "", true
}

func (e Entry) where() string {
	if e.Line == 0 {
		return "the entry for " + e.Principals
	}
	return fmt.Sprintf("line %d (%s)", e.Line, e.Principals)
}

// ParseAllowedSigners parses an OpenSSH allowed_signers file (ssh-keygen(1),
// "ALLOWED SIGNERS"): one key per line,
//
//	principals [options] keytype base64-key [comment]
//
// with blank lines and "#" comments; principals is a comma-separated list
// (double-quoted when it holds spaces); options are namespaces="...",
// valid-after="YYYYMMDD[HHMM[SS]][Z|UTC]" and valid-before="..." (times
// without Z or UTC are local time, as in OpenSSH). cert-authority, unknown
// options, a repeated option and valid-before not after valid-after are
// refused (OpenSSH refuses the last two as well), and so are certificates
// and RSA keys under [MinRSABits]. CRLF line ends are accepted. Errors name the line.
// The data is bounded by [MaxAllowedSignersSize].
func ParseAllowedSigners(data []byte) (*AllowedSigners, error) {
	if len(data) > MaxAllowedSignersSize {
		return nil, fmt.Errorf("allowed signers: %d bytes, over the %d-byte limit", len(data), MaxAllowedSignersSize)
	}
	a := &AllowedSigners{}
	for i, line := range strings.Split(string(data), "\n") {
		e, ok, err := parseLine(strings.TrimSuffix(line, "\r"))
		if err != nil {
			return nil, fmt.Errorf("allowed signers line %d: %w", i+1, err)
		}
		if ok {
			e.Line = i + 1
			a.entries = append(a.entries, e)
		}
	}
	return a, nil
}

func parseLine(line string) (Entry, bool, error) {
	rest := strings.TrimLeft(line, " \t")
	if rest == "" || rest[0] == '#' {
		return Entry{}, false, nil
	}
	principals, rest, err := nextField(rest)
	if err != nil {
		return Entry{}, false, fmt.Errorf("principals: %w", err)
	}
	if principals == "" {
		return Entry{}, false, errors.New("empty principals")
	}
	var e Entry
	e.Principals = principals
	// The key comes next, or options then the key (OpenSSH tries the key
	// first).
	f := strings.Fields(rest)
	if len(f) >= 2 {
		key, err := parseKeyFields(f[0], f[1])
		if err == nil {
			e.Key = key
			e.Fingerprint = ssh.FingerprintSHA256(key)
			return e, true, nil
		}
		// A field named like a key type was meant as the key.
		if looksLikeKeyType(f[0]) {
			return Entry{}, false, err
		}
	}
	opts, rest, err := nextOptions(rest)
	if err != nil {
		return Entry{}, false, err
	}
	if err := e.setOptions(opts); err != nil {
		return Entry{}, false, err
	}
	f = strings.Fields(rest)
	if len(f) < 2 {
		return Entry{}, false, errors.New("missing key: want \"principals [options] keytype base64-key\"")
	}
	key, err := parseKeyFields(f[0], f[1])
	if err != nil {
		return Entry{}, false, err
	}
	e.Key = key
	e.Fingerprint = ssh.FingerprintSHA256(key)
	return e, true, nil
}

// nextField returns the first whitespace-separated field of s, or the
// double-quoted string it starts with (quotes removed), and the rest.
func nextField(s string) (field, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return "", "", errors.New("unterminated quoted string")
		}
		field, rest = s[1:1+end], s[2+end:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return "", "", errors.New("text right after a closing quote")
		}
		return field, strings.TrimLeft(rest, " \t"), nil
	}
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, "", nil
	}
	return s[:i], strings.TrimLeft(s[i:], " \t"), nil
}

// nextOptions returns the options field (up to the first space or tab
// outside double quotes; \" escapes a quote) and the rest.
func nextOptions(s string) (opts, rest string, err error) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted && i+1 < len(s) && s[i+1] == '"':
			i++
		case c == '"':
			quoted = !quoted
		case (c == ' ' || c == '\t') && !quoted:
			return s[:i], strings.TrimLeft(s[i:], " \t"), nil
		}
	}
	if quoted {
		return "", "", errors.New("options: unterminated quoted string")
	}
	return s, "", nil
}

// setOptions applies a comma-separated option list.
func (e *Entry) setOptions(opts string) error {
	seen := map[string]bool{}
	for opts != "" {
		name, value, rest, err := nextOption(opts)
		if err != nil {
			return err
		}
		// A repeated clause is refused, as OpenSSH refuses it: neither
		// the first nor the last may silently win.
		lower := strings.ToLower(name)
		if seen[lower] {
			return fmt.Errorf("option %s is given twice", lower)
		}
		seen[lower] = true
		switch lower {
		case "cert-authority":
			return errors.New("cert-authority is not supported: list the signing keys themselves")
		case "namespaces":
			if value == "" {
				return errors.New(`namespaces="..." needs a value`)
			}
			e.Namespaces = value
		case "valid-after", "valid-before":
			t, err := parseTime(value)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if strings.EqualFold(name, "valid-after") {
				e.ValidAfter = t
			} else {
				e.ValidBefore = t
			}
		default:
			return fmt.Errorf("unsupported option %q (want namespaces, valid-after or valid-before)", printable(clip(name)))
		}
		opts = rest
	}
	if !e.ValidAfter.IsZero() && !e.ValidBefore.IsZero() && !e.ValidBefore.After(e.ValidAfter) {
		return errors.New("valid-before is not after valid-after: the key would never be valid")
	}
	return nil
}

// nextOption splits `name[="value"]` off a comma-separated list.
func nextOption(s string) (name, value, rest string, err error) {
	i := strings.IndexAny(s, ",=")
	if i < 0 {
		return s, "", "", nil
	}
	name = s[:i]
	if s[i] == ',' {
		return name, "", s[i+1:], nil
	}
	s = s[i+1:]
	if !strings.HasPrefix(s, `"`) {
		return "", "", "", fmt.Errorf("option %s: the value must be double-quoted", printable(clip(name)))
	}
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && j+1 < len(s) && s[j+1] == '"':
			b.WriteByte('"')
			j++
		case s[j] == '"':
			rest = s[j+1:]
			if rest != "" {
				if rest[0] != ',' {
					return "", "", "", fmt.Errorf("option %s: text after the closing quote", printable(clip(name)))
				}
				rest = rest[1:]
				if rest == "" {
					return "", "", "", errors.New("options end with a comma")
				}
			}
			return name, b.String(), rest, nil
		default:
			b.WriteByte(s[j])
		}
	}
	return "", "", "", fmt.Errorf("option %s: unterminated quoted value", printable(clip(name)))
}

// parseTime parses OpenSSH's YYYYMMDD[HHMM[SS]][Z|UTC] (local time
// without Z or UTC, either in any case).
func parseTime(v string) (time.Time, error) {
	loc := time.Local
	s := v
	switch {
	case len(s) > 1 && strings.EqualFold(s[len(s)-1:], "Z"):
		loc, s = time.UTC, s[:len(s)-1]
	case len(s) > 3 && strings.EqualFold(s[len(s)-3:], "UTC"):
		loc, s = time.UTC, s[:len(s)-3]
	}
	var layout string
	switch len(s) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, fmt.Errorf("time %q is not YYYYMMDD[HHMM[SS]][Z]", printable(clip(v)))
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return time.Time{}, fmt.Errorf("time %q is not YYYYMMDD[HHMM[SS]][Z]", printable(clip(v)))
		}
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q is not a valid date: %w", printable(clip(v)), err)
	}
	return t, nil
}

// parseKeyFields parses "keytype" "base64" into a key and checks the two
// agree. Certificates are refused.
func parseKeyFields(typ, b64 string) (ssh.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("key of type %q: the key data is not base64", printable(clip(typ)))
	}
	key, err := ssh.ParsePublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("key of type %q: %v", printable(clip(typ)), err)
	}
	if key.Type() != typ {
		return nil, fmt.Errorf("key type %q does not match the key data (%s)", printable(clip(typ)), key.Type())
	}
	if _, ok := key.(*ssh.Certificate); ok {
		return nil, errors.New("certificates are not supported: list the plain public key")
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	return key, nil
}

// matchList reports whether s matches the comma-separated pattern list
// (OpenSSH match_pattern_list): a negated pattern ("!x") that matches
// wins; otherwise any matching pattern matches.
func matchList(s, list string) bool {
	matched := false
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if wildcard.Match(p, s) {
			if neg {
				return false
			}
			matched = true
		}
	}
	return matched
}

// looksLikeKeyType reports whether s is named like an SSH key type
// ("ssh-ed25519", "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com").
func looksLikeKeyType(s string) bool {
	for _, p := range []string{"ssh-", "ecdsa-", "sk-", "rsa-"} {
		if strings.HasPrefix(s, p) && !strings.ContainsAny(s, "=,\"") {
			return true
		}
	}
	return false
}
