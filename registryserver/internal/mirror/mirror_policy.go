package mirror

import (
	"context"
	"errors"
	"fmt"

	"github.com/jigkit/jig/registryserver/internal/core"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver/internal/publish"
)

// maxJudgedPerRefresh bounds the versions whose signatures one refresh
// of a versions list asks of the upstream (two small requests each): the
// newest are judged first, the others at the next refreshes.
const maxJudgedPerRefresh = 64

// maxLatestTries bounds the versions a latest read tries, newest first,
// when the newest ones turn out to be refused by the signing policy.
const maxLatestTries = 4

// policyRefusal is a version of an upstream that the signing policy
// (SIGNERS_DIR) refuses: it is unsigned, or signed by no listed key. It
// holds for as long as the same signer files are in force, so it is
// remembered (mirror.verdicts) and answered 403 without asking the
// upstream again. A failure to fetch or verify is never one.
type policyRefusal struct {
	id     string // the local "@ns/<path>@<version>"
	reason string
}

func (e *policyRefusal) Error() string {
	return e.id + " is refused by the signing policy: " + e.reason
}

// apiError is the 403 of the refusal, with the code the code table gives
// a version no listed key signed.
func (e *policyRefusal) apiError() *core.APIError {
	return &core.APIError{Code: wire.CodeSignatureInvalid, Msg: fmt.Sprintf(
		"%s is not served by this server: its signing policy (SIGNERS_DIR) takes only versions signed by a key the namespace's signer file lists, and %s. Use a version signed by a listed key.",
		e.id, e.reason)}
}

// verdict is what the signing policy in force (signers) said of a version.
type verdict struct {
	signers core.SignerSet
	refusal *policyRefusal // nil: accepted
}

// judgeSignatures checks the signature fields of the upstream's version
// (idx, the upstream's digest index) of local ns/path@version: each must
// verify over idx (else a plain error: the upstream's answer is wrong),
// and where the namespace requires signed versions one must be by a
// listed key (else a *policyRefusal, remembered). It returns the
// signatures document to store.
func (h *Mirror) judgeSignatures(ns, path, version string, idx *registry.DigestIndex, fields [][]byte) ([]byte, error) {
	doc, err := publish.CheckSignatures(idx, fields, nil, h.Now())
	if err != nil {
		return nil, core.SignatureRefusal(err)
	}
	signers := h.SignersInForce()
	allowed := signers.For(ns)
	if allowed == nil {
		return doc, nil
	}
	v := verdict{signers: signers}
	doc, err = publish.CheckSignatures(idx, fields, allowed, h.Now())
	if err != nil {
		reason := "no signature of it is by a listed key"
		if len(fields) == 0 {
			reason = "it has no signature"
		}
		v.refusal = &policyRefusal{id: ns + "/" + path + "@" + version, reason: reason}
	}
	h.mirror.remember(layout.Manifest(ns, path, version), v)
	if v.refusal != nil {
		return nil, v.refusal
	}
	return doc, nil
}

// remember notes the verdict on the version of manifest key.
func (mi *mirror) remember(key string, v verdict) {
	mi.mu.Lock()
	defer mi.mu.Unlock()
	if len(mi.verdicts) >= maxMirrorTracked {
		clear(mi.verdicts)
	}
	mi.verdicts[key] = v
}

// verdictOf returns the verdict on the version of manifest key under the
// signer files in force, and whether there is one.
func (h *Mirror) verdictOf(key string) (verdict, bool) {
	mi := h.mirror
	mi.mu.Lock()
	v, ok := mi.verdicts[key]
	mi.mu.Unlock()
	return v, ok && v.signers == h.SignersInForce()
}

// refusedByPolicy returns the refusal of the version of manifest key
// under the signer files in force, nil when it is not known to be refused.
func (h *Mirror) refusedByPolicy(key string) *policyRefusal {
	if v, ok := h.verdictOf(key); ok {
		return v.refusal
	}
	return nil
}

// judgeUpstreamVersions asks the upstream for the signatures of each
// version of vs (an upstream's versions list of local ns/path) that is
// not stored here and not yet judged, when ns requires signed versions,
// so that a versions list leaves out what the mirror will never serve
// (at most [maxJudgedPerRefresh] per call, newest first). A version whose
// signatures cannot be fetched or verified now is left to the pull, which
// tells.
func (h *Mirror) judgeUpstreamVersions(ctx context.Context, cl *registryclient.Client, ns, path, remote string, vs []string) {
	if h.SignersInForce().For(ns) == nil {
		return
	}
	asked := 0
	for _, v := range vs {
		key := layout.Manifest(ns, path, v)
		if _, judged := h.verdictOf(key); judged {
			continue
		}
		if _, err := h.CommitOf(ctx, key); err == nil || ctx.Err() != nil {
			continue
		}
		if asked++; asked > maxJudgedPerRefresh {
			return
		}
		id := registry.ID{Namespace: remote, Path: path, Version: v}
		idx, err := cl.Digests(ctx, id)
		if err != nil {
			continue
		}
		sigs, err := cl.Signatures(ctx, id, v)
		if err != nil {
			continue
		}
		var fields [][]byte
		if sigs != nil {
			for _, s := range sigs.Signatures {
				fields = append(fields, []byte(s.Signature))
			}
		}
		if idx == nil && len(fields) > 0 {
			continue // a signature needs the index to be checked: the pull tells
		}
		if idx == nil {
			idx = &registry.DigestIndex{Namespace: remote, Path: path, Version: v}
		}
		_, _ = h.judgeSignatures(ns, path, v, idx, fields)
	}
}

// servable returns the versions of vs (of local ns/path) that the signing
// policy in force is not known to refuse.
func (h *Mirror) servable(ns, path string, vs []string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if h.refusedByPolicy(layout.Manifest(ns, path, v)) == nil {
			out = append(out, v)
		}
	}
	return out
}

// isPolicyRefusal reports whether err is a refusal by the signing policy.
func isPolicyRefusal(err error) bool {
	var pr *policyRefusal
	return errors.As(err, &pr)
}
