package publish

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
)

// SignatureKind says why [CheckSignatures] refused a version's
// signatures.
type SignatureKind int

// The kinds of [SignatureError].
const (
	// SignatureRequired: the namespace requires signed versions and the
	// version has no signature.
	SignatureRequired SignatureKind = iota + 1
	// SignatureInvalid: a signature does not parse or does not verify
	// over the version's digest index.
	SignatureInvalid
	// SignatureUntrusted: every signature verifies, but none is by a key
	// the namespace's signer file allows.
	SignatureUntrusted
)

// SignatureError is a refusal of a version's signatures by
// [CheckSignatures].
type SignatureError struct {
	Kind SignatureKind
	// Namespace is the version's namespace, Version its
	// "@ns/<path>@<version>".
	Namespace, Version string
	// Index is the 1-based number of the signature that is invalid
	// (SignatureInvalid).
	Index int
	// Reason is why the signature is invalid, or why each signature's key
	// is not allowed (SignatureUntrusted).
	Reason string
}

// Code is the wire code of the refusal: SIGNATURE_REQUIRED (400) or
// SIGNATURE_INVALID (403).
func (e *SignatureError) Code() wire.Code {
	if e.Kind == SignatureRequired {
		return wire.CodeSignatureRequired
	}
	return wire.CodeSignatureInvalid
}

// Error is the message sent to the publisher: what is wrong and how to
// sign (the wire message of the reference's clients).
func (e *SignatureError) Error() string {
	switch e.Kind {
	case SignatureRequired:
		return fmt.Sprintf("Namespace %s requires signed versions: sign the digest index with `jig publish --sign-key <private key>`, or sign the output of `jig publish --print-digests` with `ssh-keygen -Y sign -n %s` and pass it with --signature",
			e.Namespace, signing.Namespace)
	case SignatureInvalid:
		return fmt.Sprintf("Signature %d of %s is invalid: %s. Sign exactly what `jig publish --print-digests` prints for this version, in namespace %s.",
			e.Index, e.Version, e.Reason, signing.Namespace)
	}
	return fmt.Sprintf("No signature of %s is by a key the namespace's signer file allows: %s. Sign with a listed key, or ask the server's operator to add yours.",
		e.Version, e.Reason)
}

// CheckSignatures verifies the signature fields of an upload against the
// version's digest index, before anything is stored, and returns the
// signatures document to store beside the version (nil for an upload
// without signatures). signers are the namespace's allowed signers, nil
// when it does not require signed versions. Every signature must parse
// and verify (a [*SignatureError] of kind [SignatureInvalid], whatever the
// namespace); with signers, at least one must be by a key they list for
// now ([SignatureRequired] without any, [SignatureUntrusted] otherwise).
// Several signatures by one key are stored once.
func CheckSignatures(idx *registry.DigestIndex, fields [][]byte, signers *signing.AllowedSigners, now time.Time) ([]byte, error) {
	id := idx.Namespace + "/" + idx.Path + "@" + idx.Version
	if len(fields) == 0 {
		if signers != nil {
			return nil, &SignatureError{Kind: SignatureRequired, Namespace: idx.Namespace, Version: id}
		}
		return nil, nil
	}
	data, err := idx.Marshal()
	if err != nil {
		return nil, err
	}
	doc := wire.Signatures{Namespace: idx.Namespace, Path: idx.Path, Version: idx.Version, Signatures: []wire.SignatureInfo{}}
	seen := map[string]bool{}
	trusted := false
	var refused []string
	for i, f := range fields {
		sig, err := signing.ParseSignature(f)
		if err == nil {
			err = sig.Verify(data)
		}
		if err != nil {
			return nil, &SignatureError{Kind: SignatureInvalid, Namespace: idx.Namespace, Version: id, Index: i + 1,
				Reason: strings.TrimPrefix(err.Error(), signing.ErrBadSignature.Error()+": ")}
		}
		info := wire.SignatureInfo{Signature: string(sig.Armored), Key: signing.FormatPublicKey(sig.Key), Fingerprint: sig.Fingerprint}
		if signers != nil {
			who, err := signers.Verify(data, sig, now)
			if err == nil {
				trusted = true
				info.Principal = who.Principal
			} else {
				refused = append(refused, err.Error())
			}
		}
		if seen[sig.Fingerprint] {
			continue
		}
		seen[sig.Fingerprint] = true
		doc.Signatures = append(doc.Signatures, info)
	}
	if signers != nil && !trusted {
		return nil, &SignatureError{Kind: SignatureUntrusted, Namespace: idx.Namespace, Version: id, Reason: strings.Join(refused, "; ")}
	}
	return json.Marshal(doc)
}

// Signers names the keys of a signatures document as [CheckSignatures]
// returns it (nil for none, or for one that does not parse): each key's
// fingerprint, with the principal the signer file gave it in parentheses.
func Signers(doc []byte) []string {
	if doc == nil {
		return nil
	}
	var s wire.Signatures
	if json.Unmarshal(doc, &s) != nil {
		return nil
	}
	out := make([]string, 0, len(s.Signatures))
	for _, si := range s.Signatures {
		if si.Principal != "" {
			out = append(out, si.Fingerprint+" ("+si.Principal+")")
		} else {
			out = append(out, si.Fingerprint)
		}
	}
	return out
}
