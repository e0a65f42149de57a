package registryclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient/cache"
)

// ErrLog is matched by a [*LogError].
var ErrLog = errors.New("refused by the transparency log check")

// LogError refuses a version that its namespace's transparency log does
// not vouch for: it is not in the log, the log's proof does not verify,
// or the log recorded another digest index for it (the version was
// changed after it was published).
type LogError struct {
	// Version is "@ns/<path>@<version>", Server the base URL.
	Version, Server string
	Problem         string
}

func (e *LogError) Error() string {
	return fmt.Sprintf("refusing %s from %s: %s. Nothing was written", e.Version, e.Server, e.Problem)
}

// Unwrap returns [ErrLog].
func (e *LogError) Unwrap() error { return ErrLog }

// compileLogKey parses the verifier line of a namespace's log key.
func compileLogKey(ns, vkey string) (note.Verifier, error) {
	if vkey == "" {
		return nil, nil
	}
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return nil, fmt.Errorf("%w: registry %s: trust.log %q is not a log verifier key; copy the line GET /log/key of the server shows (\"<name>+<hash>+<key>\")", ErrInvalidConfig, ns, vkey)
	}
	return v, nil
}

// checkLog checks that id@version, with the digest index bytes index, is
// in its namespace's log: a proof remembered in the cache is verified
// offline; otherwise GET /log/lookup/@ns/<path>@<version> proves it
// against the server's current checkpoint, which must extend the last
// one this machine saw of that log (a [*translog.ForkError] otherwise).
// It returns the record's index in the log. Without a log key it
// checks nothing and returns -1.
func (c *Client) checkLog(ctx context.Context, id registry.ID, version string, index []byte) (int64, error) {
	v := c.logKey
	if v == nil {
		return -1, nil
	}
	origin := translog.Origin(v.Name(), id.Namespace)
	headKey := c.baseStr + " " + origin
	vid := id.Key() + "@" + version
	proofKey := headKey + " " + vid
	digest := registry.Digest(index)
	refuse := func(problem string) error {
		return &LogError{Version: vid, Server: c.baseStr, Problem: problem}
	}
	check := func(proof []byte) (translog.Checkpoint, int64, error) {
		p, err := translog.ParseProof(proof)
		if err != nil {
			return translog.Checkpoint{}, 0, refuse("its log proof is malformed (" + err.Error() + ")")
		}
		rec, cp, err := p.Verify(v, origin)
		if err != nil {
			return translog.Checkpoint{}, 0, refuse("its log proof does not verify (" + err.Error() + ")")
		}
		if rec.Namespace != id.Namespace || rec.Path != id.Path || rec.Version != version {
			return translog.Checkpoint{}, 0, refuse("the log's record is of " + rec.ID())
		}
		if rec.IndexDigest != digest {
			return translog.Checkpoint{}, 0, refuse(fmt.Sprintf("the log recorded digest index %s for it, and the server now serves %s: the version was changed after it was published", rec.IndexDigest, digest))
		}
		return cp, p.Index, nil
	}
	mem := c.opts.cache
	if mem != nil {
		if proof, ok, err := mem.LogProof(proofKey); err != nil {
			return 0, err
		} else if ok {
			_, i, err := check([]byte(proof))
			return i, err
		}
	}
	if c.opts.mode == Offline {
		return 0, notCached("transparency log proof of %s from %s", vid, c.baseStr)
	}
	var remembered cache.LogHead
	var have bool
	if mem != nil {
		var err error
		if remembered, have, err = mem.LogHead(headKey); err != nil {
			return 0, err
		}
	}
	pid := id.WithVersion(version)
	pid = pid.Bare()
	path := "/log/lookup/" + id.Namespace + "/" + id.Path + "@" + version
	if have && remembered.Size > 0 {
		path += "?since=" + strconv.FormatInt(remembered.Size, 10)
	}
	var l translog.Lookup
	err := c.getJSON(ctx, request{path: path, registry: idLabel(pid), maxBytes: 1 << 20}, &l)
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
		return 0, refuse("it is not in the transparency log of " + id.Namespace + " (" + se.Message + ")")
	}
	if err != nil {
		return 0, err
	}
	cp, i, err := check([]byte(l.Proof))
	if err != nil {
		return 0, err
	}
	if have {
		old, err := rememberedCheckpoint(remembered, origin)
		if err != nil {
			return 0, err
		}
		tp, err := l.TreeProof()
		if err != nil {
			return 0, refuse(err.Error())
		}
		if cp.Size > old.Size && l.Since != old.Size {
			return 0, refuse(fmt.Sprintf("the server sent no consistency proof from the tree head of size %d this machine saw", old.Size))
		}
		if err := translog.CheckConsistency(old, cp, tp); err != nil {
			return 0, err
		}
	}
	if mem != nil {
		head := cache.LogHead{Size: cp.Size, Hash: cp.Hash.String(), Checkpoint: string(mustProofCheckpoint(l.Proof))}
		if err := mem.RecordLog(ctx, headKey, head, proofKey, l.Proof); err != nil {
			return 0, err
		}
	}
	return i, nil
}

// rememberedCheckpoint is the checkpoint of a remembered head.
func rememberedCheckpoint(h cache.LogHead, origin string) (translog.Checkpoint, error) {
	text, _, _ := strings.Cut(h.Checkpoint, "\n\n")
	cp, err := translog.ParseCheckpoint([]byte(text + "\n"))
	if err != nil || cp.Origin != origin || cp.Size != h.Size || cp.Hash.String() != h.Hash {
		return translog.Checkpoint{}, fmt.Errorf("the transparency-log memory of %s is damaged; delete logs.json in the cache folder to start over", origin)
	}
	return cp, nil
}

// mustProofCheckpoint returns the signed checkpoint of a proof that
// parsed before.
func mustProofCheckpoint(proof string) []byte {
	p, _ := translog.ParseProof([]byte(proof))
	return p.Checkpoint
}
