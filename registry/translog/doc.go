// Package translog holds the formats of jig's transparency log of
// published versions, shared by the server that appends to it and the
// clients that verify it: the [Record] each stored version appends (its
// leaf), the C2SP checkpoint a log key signs ([Checkpoint],
// [OpenCheckpoint]), the C2SP tlog-proof an offline verifier needs
// ([Proof]), the body of the lookup route ([Lookup]) and the consistency
// check that catches a forked or rolled-back log ([CheckConsistency]).
//
// The tree, its tiles and its proofs are golang.org/x/mod/sumdb/tlog's
// (as the Go checksum database's); checkpoints are notes of
// golang.org/x/mod/sumdb/note. Every namespace has a log of its own, so
// that a caller who may read a namespace sees all of its log and nothing
// of another's; one log key signs the checkpoints of every namespace, and
// a checkpoint's origin line ([Origin]) names the namespace.
//
// Verifying a version against a log:
//
//	p, err := translog.ParseProof(proofText)
//	verifier, err := note.NewVerifier(vkey) // "jig.example.com+1a2b3c4d+AbC…"
//	rec, cp, err := p.Verify(verifier, translog.Origin(verifier.Name(), "@acme"))
//	// rec.IndexDigest must be the sha-256 of the digest index served for rec.ID().
//	err = translog.CheckConsistency(remembered, cp, consistencyProof)
package translog
