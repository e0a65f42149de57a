package registryclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
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
	// Err is the cause when it has data of its own: a
	// [*translog.WitnessError] for a checkpoint too few witnesses
	// cosigned.
	Err error
}

func (e *LogError) Error() string {
	return fmt.Sprintf("refusing %s from %s: %s. Nothing was written", e.Version, e.Server, e.Problem)
}

// Unwrap returns [ErrLog] and Err.
func (e *LogError) Unwrap() []error { return []error{ErrLog, e.Err} }

// NotWitnessedError is the cause ([LogError].Err) of refusing a version
// of a namespace whose trust requires Min witnesses, when the version is
// in the log but not (yet) in a tree head Min witnesses cosigned: they
// have not run since it was published. It passes once they have.
type NotWitnessedError struct {
	// Namespace is the log's namespace ("@acme").
	Namespace string
	// Min is how many witnesses are required.
	Min int
}

func (e *NotWitnessedError) Error() string {
	return fmt.Sprintf("the log of %s holds the version beyond the newest tree head %d witnesses cosigned", e.Namespace, e.Min)
}

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

// compileWitnesses parses the witness policy of a namespace's trust.
func compileWitnesses(ns string, t *Trust) (translog.WitnessPolicy, error) {
	if t == nil || (len(t.Witnesses) == 0 && t.MinWitnesses == 0) {
		return translog.WitnessPolicy{}, nil
	}
	if t.Log == "" {
		return translog.WitnessPolicy{}, fmt.Errorf("%w: registry %s: trust.witnesses cosign a transparency log, and trust.log names no log key to check it with", ErrInvalidConfig, ns)
	}
	p, err := translog.NewWitnessPolicy(t.Witnesses, t.MinWitnesses)
	if err != nil {
		return translog.WitnessPolicy{}, fmt.Errorf("%w: registry %s: trust.witnesses: %w", ErrInvalidConfig, ns, err)
	}
	return p, nil
}

// logCheck is the transparency-log check of one version: what it is
// checked against, and where its proof and the log's tree head are kept.
type logCheck struct {
	c                 *Client
	id                registry.ID
	version, digest   string
	origin, vid       string
	headKey, proofKey string
}

func (c *Client) newLogCheck(id registry.ID, version string, index []byte) logCheck {
	origin := translog.Origin(c.logKey.Name(), id.Namespace)
	headKey := c.baseStr + " " + origin
	vid := id.Key() + "@" + version
	return logCheck{c: c, id: id, version: version, digest: registry.Digest(index),
		origin: origin, vid: vid, headKey: headKey, proofKey: headKey + " " + vid}
}

func (k logCheck) refuse(problem string) error {
	return &LogError{Version: k.vid, Server: k.c.baseStr, Problem: problem}
}

// verifyProof checks an offline proof of the version: signed by the log
// key, proving the version's record, which names the digest index served.
func (k logCheck) verifyProof(proof []byte) (translog.Checkpoint, int64, error) {
	p, err := translog.ParseProof(proof)
	if err != nil {
		return translog.Checkpoint{}, 0, k.refuse("its log proof is malformed (" + err.Error() + ")")
	}
	rec, cp, err := p.Verify(k.c.logKey, k.origin)
	if err != nil {
		return translog.Checkpoint{}, 0, k.refuse("its log proof does not verify (" + err.Error() + ")")
	}
	if _, err := k.c.witnesses.Check(p.Checkpoint, cp); err != nil {
		return translog.Checkpoint{}, 0, &LogError{Version: k.vid, Server: k.c.baseStr, Problem: err.Error(), Err: err}
	}
	if rec.Namespace != k.id.Namespace || rec.Path != k.id.Path || rec.Version != k.version {
		return translog.Checkpoint{}, 0, k.refuse("the log's record is of " + rec.ID())
	}
	if rec.IndexDigest != k.digest {
		return translog.Checkpoint{}, 0, k.refuse(fmt.Sprintf("the log recorded digest index %s for it, and the server now serves %s: the version was changed after it was published", rec.IndexDigest, k.digest))
	}
	return cp, p.Index, nil
}

// stored verifies the version from the proof a bundle being imported
// carries ([Client.ImportBundle]) or the cache remembers, if any.
func (k logCheck) stored() (int64, bool, error) {
	k.c.idxMu.Lock()
	proof, ok := k.c.bundleProofs[k.proofKey]
	k.c.idxMu.Unlock()
	if ok {
		_, i, err := k.verifyProof([]byte(proof))
		return i, true, err
	}
	mem := k.c.opts.cache
	if mem == nil {
		return 0, false, nil
	}
	proof, ok, err := mem.LogProof(k.proofKey)
	if err != nil || !ok {
		return 0, false, err
	}
	_, i, err := k.verifyProof([]byte(proof))
	if _, short := errors.AsType[*translog.WitnessError](err); short && k.c.opts.mode != Offline {
		// Stored before the witnesses cosigned it (or before more were
		// required): prove it again against the current checkpoint.
		return 0, false, nil
	}
	return i, true, err
}

// remembered returns the largest tree head of the log this machine saw.
func (k logCheck) remembered() (cache.LogHead, bool, error) {
	if k.c.opts.cache == nil {
		return cache.LogHead{}, false, nil
	}
	return k.c.opts.cache.LogHead(k.headKey)
}

// accept verifies a lookup's answer for the version (its proof, and its
// checkpoint's consistency with remembered when have), then remembers
// the proof and the tree head.
func (k logCheck) accept(ctx context.Context, l translog.Lookup, remembered cache.LogHead, have bool) (int64, error) {
	cp, i, err := k.verifyLookup(l, remembered, have)
	if err != nil {
		return 0, err
	}
	if mem := k.c.opts.cache; mem != nil {
		if err := mem.RecordLog(ctx, k.headKey, headOf(cp, l.Proof), k.proofKey, l.Proof); err != nil {
			return 0, err
		}
	}
	k.c.rememberLogIndex(k.vid, i)
	return i, nil
}

// headOf is the tree head to remember of checkpoint cp, which proof
// (verified) is against.
func headOf(cp translog.Checkpoint, proof string) cache.LogHead {
	return cache.LogHead{Size: cp.Size, Hash: cp.Hash.String(), Checkpoint: string(mustProofCheckpoint(proof))}
}

// verifyLookup is accept without remembering anything.
func (k logCheck) verifyLookup(l translog.Lookup, remembered cache.LogHead, have bool) (translog.Checkpoint, int64, error) {
	fail := func(err error) (translog.Checkpoint, int64, error) { return translog.Checkpoint{}, 0, err }
	cp, i, err := k.verifyProof([]byte(l.Proof))
	if err != nil {
		return fail(err)
	}
	if have {
		old, err := rememberedCheckpoint(remembered, k.origin)
		if err != nil {
			return fail(err)
		}
		if cp.Size < old.Size && k.c.witnesses.Min > 0 {
			// The server proves against the newest tree head the
			// witnesses cosigned; one remembered before they were
			// required may be newer, and is no rollback. One they
			// cosigned is: the server or k witnesses went back.
			_, err := k.c.witnesses.Check([]byte(remembered.Checkpoint), old)
			if _, short := errors.AsType[*translog.WitnessError](err); short {
				return fail(&LogError{Version: k.vid, Server: k.c.baseStr, Err: &NotWitnessedError{Namespace: k.id.Namespace, Min: k.c.witnesses.Min},
					Problem: fmt.Sprintf("the newest tree head of %s that %d witnesses cosigned (size %d) is older than the one this machine saw before it required witnesses (size %d)", k.origin, k.c.witnesses.Min, cp.Size, old.Size)})
			}
		}
		tp, err := l.TreeProof()
		if err != nil {
			return fail(k.refuse(err.Error()))
		}
		if cp.Size > old.Size && l.Since != old.Size {
			return fail(k.refuse(fmt.Sprintf("the server sent no consistency proof from the tree head of size %d this machine saw", old.Size)))
		}
		if err := translog.CheckConsistency(old, cp, tp); err != nil {
			return fail(err)
		}
	}
	return cp, i, nil
}

// checkLog checks that id@version, with the digest index bytes index, is
// in its namespace's log: a proof remembered in the cache is verified
// offline; otherwise GET /log/lookup/@ns/<path>@<version> proves it
// against the server's current checkpoint, which must extend the last
// one this machine saw of that log (a [*translog.ForkError] otherwise).
// Within a [LogBatch] the lookup waits for [LogBatch.Verify], which makes
// the lookups of a batch in one request. It returns the record's index in
// the log (-1 while it waits). Without a log key it checks nothing and
// returns -1.
func (c *Client) checkLog(ctx context.Context, id registry.ID, version string, index []byte) (int64, error) {
	if c.logKey == nil {
		return -1, nil
	}
	k := c.newLogCheck(id, version, index)
	if i, ok, err := k.stored(); ok || err != nil {
		if err == nil {
			c.rememberLogIndex(k.vid, i)
		}
		return i, err
	}
	if c.opts.mode == Offline {
		return 0, notCached("transparency log proof of %s from %s", k.vid, c.baseStr)
	}
	if b := logBatchOf(ctx); b != nil && b.defer_(k) {
		return -1, nil
	}
	return k.lookup(ctx)
}

// lookup proves the version with GET /log/lookup/@ns/<path>@<version>.
func (k logCheck) lookup(ctx context.Context) (int64, error) {
	c := k.c
	remembered, have, err := k.remembered()
	if err != nil {
		return 0, err
	}
	pid := k.id.WithVersion(k.version)
	pid = pid.Bare()
	q := url.Values{}
	if have && remembered.Size > 0 {
		q.Set("since", strconv.FormatInt(remembered.Size, 10))
	}
	if c.witnesses.Min > 0 {
		// Proven against the newest tree head that many witnesses
		// cosigned, which may be older than the current one.
		q.Set("witnesses", strconv.Itoa(c.witnesses.Min))
	}
	path := "/log/lookup/" + k.id.Namespace + "/" + k.id.Path + "@" + k.version
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var l translog.Lookup
	err = c.getJSON(ctx, request{path: path, registry: idLabel(pid), maxBytes: 1 << 20}, &l)
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
		return 0, k.refuse("it is not in the transparency log of " + k.id.Namespace + " (" + se.Message + ")")
	}
	if errors.As(err, &se) && se.Code == wire.CodeNotWitnessed && c.witnesses.Min > 0 {
		return 0, &LogError{Version: k.vid, Server: c.baseStr, Problem: se.Message, Err: &NotWitnessedError{Namespace: k.id.Namespace, Min: c.witnesses.Min}}
	}
	if err != nil {
		return 0, err
	}
	return k.accept(ctx, l, remembered, have)
}

// rememberLogIndex keeps the log index of a version verified by this
// client, for [Client.LogIndex].
func (c *Client) rememberLogIndex(vid string, i int64) {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	if c.logIndexes == nil {
		c.logIndexes = map[string]int64{}
	}
	c.logIndexes[vid] = i
}

// LogIndex returns the index in its namespace's transparency log of a
// version this client verified (id.Version, or version when given), and
// false when it verified none (no log key is trusted for the namespace,
// or the version was not read).
func (c *Client) LogIndex(id registry.ID, version string) (int64, bool) {
	if version == "" {
		version = id.Version
	}
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	i, ok := c.logIndexes[id.Key()+"@"+version]
	return i, ok
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
