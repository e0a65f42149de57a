package registryclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient/cache"
)

// LogBatch gathers the transparency-log lookups of the versions a
// command reads (a resolution: a preset's eight registries) so that
// [LogBatch.Verify] proves them in one request per source, POST
// /log/lookup, instead of one GET /log/lookup each. Between
// [WithLogBatch] and Verify, a version that needs a lookup is accepted
// provisionally: the caller must call Verify before it writes or trusts
// anything read, and must stop on its error. After Verify, lookups are
// made one by one again.
type LogBatch struct {
	mu      sync.Mutex
	pending []logCheck
	closed  bool
}

type logBatchKey struct{}

// WithLogBatch returns ctx carrying a new [LogBatch]: the clients the
// context is passed to defer their log lookups to the batch.
func WithLogBatch(ctx context.Context) (context.Context, *LogBatch) {
	b := &LogBatch{}
	return context.WithValue(ctx, logBatchKey{}, b), b
}

func logBatchOf(ctx context.Context) *LogBatch {
	b, _ := ctx.Value(logBatchKey{}).(*LogBatch)
	return b
}

// defer_ adds k to the batch unless it was verified already.
func (b *LogBatch) defer_(k logCheck) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.pending = append(b.pending, k)
	return true
}

// Verify makes the lookups the batch gathered, one POST /log/lookup per
// client (source) for up to [translog.MaxBatchVersions] versions, and
// checks every answer as a single lookup's is checked (inclusion, the
// digest index, consistency with the tree head remembered). A version
// the answer leaves out (not in the log, or a server without the batch
// route) is looked up alone, for its precise error. It returns the first
// refusal. Verify closes the batch: later lookups are made at once.
//
// API: POST /log/lookup
func (b *LogBatch) Verify(ctx context.Context) error {
	b.mu.Lock()
	pending := b.pending
	b.pending, b.closed = nil, true
	b.mu.Unlock()
	var order []*Client
	groups := map[*Client][]logCheck{}
	for _, k := range pending {
		if groups[k.c] == nil {
			order = append(order, k.c)
		}
		groups[k.c] = append(groups[k.c], k)
	}
	for _, c := range order {
		ks := groups[c]
		for len(ks) > 0 {
			n := min(len(ks), translog.MaxBatchVersions)
			if err := c.verifyBatch(ctx, ks[:n]); err != nil {
				return err
			}
			ks = ks[n:]
		}
	}
	return nil
}

// verifyBatch proves ks (all of c's namespace, distinct or not) with one
// POST /log/lookup.
func (c *Client) verifyBatch(ctx context.Context, ks []logCheck) error {
	req := translog.BatchRequest{Since: map[string]int64{}}
	if c.witnesses.Min > 0 {
		req.Witnesses = map[string]int{}
	}
	seen := map[string]bool{}
	type head struct {
		h    cache.LogHead
		have bool
	}
	// The tree heads the request's since sizes come from: every answer
	// is checked against them.
	heads := map[string]head{}
	for _, k := range ks {
		if seen[k.vid] {
			continue
		}
		seen[k.vid] = true
		req.Versions = append(req.Versions, k.vid)
		if _, ok := heads[k.headKey]; ok {
			continue
		}
		h, have, err := k.remembered()
		if err != nil {
			return err
		}
		heads[k.headKey] = head{h, have}
		if have && h.Size > 0 {
			req.Since[k.id.Namespace] = h.Size
		}
		if req.Witnesses != nil {
			req.Witnesses[k.id.Namespace] = c.witnesses.Min
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var resp translog.BatchResponse
	err = c.getJSON(ctx, request{method: http.MethodPost, path: "/log/lookup", registry: c.opts.namespace, maxBytes: 8 << 20,
		header: http.Header{"Content-Type": {"application/json"}}, body: body}, &resp)
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusMethodNotAllowed) {
		err, resp = nil, translog.BatchResponse{} // a server without the route: one by one
	}
	if err != nil {
		return err
	}
	// Everything is verified before anything is remembered; then one
	// write of the memory per log.
	type verified struct {
		head   cache.LogHead
		proofs map[string]string
	}
	got := map[string]*verified{}
	indexes := map[string]int64{}
	for _, k := range ks {
		l, ok := resp.Lookup(translog.VersionID{Namespace: k.id.Namespace, Path: k.id.Path, Version: k.version})
		if !ok {
			if _, err := k.lookup(ctx); err != nil {
				return err
			}
			continue
		}
		h := heads[k.headKey]
		cp, i, err := k.verifyLookup(l, h.h, h.have)
		if err != nil {
			return err
		}
		v := got[k.headKey]
		if v == nil {
			v = &verified{head: headOf(cp, l.Proof), proofs: map[string]string{}}
			got[k.headKey] = v
		} else if v.head.Hash != cp.Hash.String() || v.head.Size != cp.Size {
			return k.refuse("the batch answer proves versions of one log against two tree heads")
		}
		v.proofs[k.proofKey] = l.Proof
		indexes[k.vid] = i
	}
	if mem := c.opts.cache; mem != nil {
		for headKey, v := range got {
			if err := mem.RecordLogProofs(ctx, headKey, v.head, v.proofs); err != nil {
				return err
			}
		}
	}
	for vid, i := range indexes {
		c.rememberLogIndex(vid, i)
	}
	return nil
}
