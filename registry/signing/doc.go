// Package signing signs and verifies jig registry versions with SSH keys,
// in the SSHSIG format git uses for signed commits (OpenSSH's
// PROTOCOL.sshsig), so the keys and tools developers already have work:
// a signature made by [Sign] verifies with
//
//	ssh-keygen -Y verify -n jig-registry -f allowed_signers -I <principal> -s sig < digests
//
// and a signature made by
//
//	ssh-keygen -Y sign -n jig-registry -f ~/.ssh/id_ed25519 digests
//
// is accepted by [ParseSignature] and [AllowedSigners.Verify].
//
// What is signed is a version's canonical digest index
// ([github.com/jigkit/jig/registry.DigestIndex] as Marshal encodes it, the
// bytes a server serves at GET /registries/@ns/<path>/<version>/digests),
// under the SSH signature namespace [Namespace]. The index names the
// namespace, registry path and version, so a signature covers exactly one
// version.
//
// Trust is expressed with OpenSSH allowed_signers files (ssh-keygen(1),
// "ALLOWED SIGNERS"), parsed by [ParseAllowedSigners]: principals, the
// options namespaces, valid-after and valid-before, comments and blank
// lines. cert-authority lines are refused: certificate signers are not
// supported.
//
// [Signature.Verify] is the cryptographic check only; [AllowedSigners.Verify]
// also requires the key to be listed for [Namespace] at the given time. A
// signature that does not verify is [ErrBadSignature]; a valid one by a key
// that is not listed is an [*UntrustedError] (errors.Is [ErrUntrusted]).
package signing
