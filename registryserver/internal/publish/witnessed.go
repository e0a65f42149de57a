package publish

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/storage"
)

// NotWitnessedError is a version that is in its log, at Index, beyond
// the newest tree head Min witnesses cosigned, of Witnessed records (0:
// no tree head has the cosignatures of Min witnesses).
type NotWitnessedError struct {
	Index, Witnessed int64
	Min              int
}

func (e *NotWitnessedError) Error() string {
	if e.Witnessed == 0 {
		return fmt.Sprintf("publish: record %d is in the log, and no tree head carries the cosignatures of %d witnesses", e.Index, e.Min)
	}
	return fmt.Sprintf("publish: record %d is in the log, beyond the newest tree head %d witnesses cosigned (%d records)", e.Index, e.Min, e.Witnessed)
}

// LogLookupWitnessed is [LogLookup] for a client that requires k
// witnesses: the proof is against the largest tree head of ns's log that
// carries the stored cosignatures of at least k distinct witnesses
// configured says are configured ([translog.WitnessID]), with those
// cosignatures; the current tree when it has them. A version beyond that
// tree head is a [*NotWitnessedError].
func (s *Store) LogLookupWitnessed(ctx context.Context, st storage.Storage, ns, path, version string, since int64, k int, configured func(witness string) bool) (translog.Lookup, error) {
	l, err := readLog(func() (translog.Lookup, error) {
		return logLookup(ctx, st, ns, path, version, since, s.witnessedHead(k, configured))
	})
	if e, ok := errors.AsType[*NotWitnessedError](err); ok {
		e.Min = k
	}
	return l, err
}

// LogLookupBatchWitnessed is [LogLookupBatch] for a client that requires
// k witnesses, against the tree head [Store.LogLookupWitnessed] proves
// against. Versions beyond it are left out, as those not in the log; with
// no such tree head, the log is left out too (an empty BatchLog).
func (s *Store) LogLookupBatchWitnessed(ctx context.Context, st storage.Storage, ns string, since int64, versions []translog.VersionID, k int, configured func(witness string) bool) (translog.BatchLog, map[string]translog.BatchVersion, error) {
	return logLookupBatch(ctx, st, ns, since, versions, s.witnessedHead(k, configured))
}

// witnessedHead chooses the largest tree head of the log with the stored
// cosignatures of at least k distinct configured witnesses. The current
// one's signed checkpoint is the stored one; an older one is signed again
// with the log key (a true statement about the log: its hash is computed
// from the stored tiles, which are checked against the current tree; a
// cosignature of another hash of that size is not counted). It returns
// no checkpoint (nil, size 0) when no tree head has them.
func (s *Store) witnessedHead(k int, configured func(witness string) bool) headFunc {
	return func(ctx context.Context, st storage.Storage, ns string) ([]byte, int64, translog.Checkpoint, error) {
		signed, cur, err := LogCheckpoint(ctx, st, ns)
		if err != nil {
			return nil, 0, cur, err
		}
		if s.logSigner == nil || k < 1 {
			return nil, 0, cur, nil
		}
		b, err := logReader{st: st, ns: ns}.get(ctx, layout.LogCosignatures(ns), maxCosignaturesDoc)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, 0, cur, nil
		}
		if err != nil {
			return nil, 0, cur, err
		}
		d, err := parseCosignatures(b)
		if err != nil {
			return nil, 0, cur, nil // replaced by the next cosignature taken
		}
		// The tree heads cosigned, largest first, each with the lines of
		// its distinct configured witnesses.
		type head struct {
			size  int64
			hash  string
			lines []string
			seen  map[string]bool
		}
		var heads []*head
		for _, c := range d.Cosignatures {
			if c.Size <= 0 || c.Size > cur.Size || !configured(c.Witness) {
				continue
			}
			i := slices.IndexFunc(heads, func(h *head) bool { return h.size == c.Size && h.hash == c.Hash })
			if i < 0 {
				heads = append(heads, &head{size: c.Size, hash: c.Hash, seen: map[string]bool{}})
				i = len(heads) - 1
			}
			if h := heads[i]; !h.seen[c.Witness] {
				h.seen[c.Witness] = true
				h.lines = append(h.lines, c.Line)
			}
		}
		slices.SortFunc(heads, func(a, b *head) int { return cmp.Compare(b.size, a.size) })
		for _, h := range heads {
			if len(h.lines) < k {
				continue
			}
			hash, err := tlog.ParseHash(h.hash)
			if err != nil {
				continue
			}
			out := signed
			if h.size != cur.Size {
				got, err := tlog.TreeHash(h.size, newLogReader(st, ns).hashes(cur.Tree()))
				if err != nil {
					return nil, 0, cur, err
				}
				if got != hash {
					continue
				}
				if out, err = translog.SignCheckpoint(translog.Checkpoint{Origin: cur.Origin, Size: h.size, Hash: hash}, s.logSigner); err != nil {
					return nil, 0, cur, fmt.Errorf("publish: signing the witnessed tree head: %w", err)
				}
			} else if hash != cur.Hash {
				continue
			}
			out = bytes.Clone(out)
			for _, line := range h.lines {
				if len(out)+len(line)+1 > translog.MaxCheckpointSize {
					break
				}
				out = append(out, line+"\n"...)
			}
			return out, h.size, cur, nil
		}
		return nil, 0, cur, nil
	}
}
