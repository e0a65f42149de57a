package publish

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/storage"
)

// ErrTreeMismatch is returned by [CheckLogTree] for a checkpoint that is
// not a tree head of the namespace's log: larger than its current tree,
// or with another root hash than the log's tree of that size.
var ErrTreeMismatch = errors.New("not a tree head of this log")

// keptHeadsPerWitness is how many tree heads (of distinct sizes) the
// server keeps each witness's cosignature of: its newest few, so that a
// lookup that requires k witnesses finds a tree head k of them cosigned
// although they ran at different times, between publishes.
const keptHeadsPerWitness = 4

// maxCosignaturesDoc bounds the stored cosignatures document: per kept
// cosignature, the witness ID and the signature line (each holding a key
// name shorter than a verifier key), a hash and JSON's field names.
const maxCosignaturesDoc = translog.MaxCosignatures * keptHeadsPerWitness * (2*translog.MaxVerifierKeySize + 256)

// storedCosignature is one witness's cosignature of one tree head, as
// kept under [layout.LogCosignatures].
type storedCosignature struct {
	// Witness is the witness's [translog.WitnessID].
	Witness string `json:"witness"`
	// Size and Hash name the tree head it cosigned.
	Size int64  `json:"size"`
	Hash string `json:"hash"`
	// Time is the cosignature's time (Unix seconds).
	Time int64 `json:"time"`
	// Line is the signature line, "— <name> <base64>".
	Line string `json:"line"`
}

type cosignaturesDoc struct {
	Cosignatures []storedCosignature `json:"cosignatures"`
}

func parseCosignatures(b []byte) (cosignaturesDoc, error) {
	var d cosignaturesDoc
	if b == nil {
		return d, nil
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("publish: the log's cosignatures document is corrupt: %w", err)
	}
	return d, nil
}

// CheckLogTree checks that cp is a tree head of ns's log: its size at
// most the current tree's, and its hash the current tree's hash of that
// size (read from the stored tiles, which are checked against the current
// tree). It returns the current checkpoint, [ErrNotLogged] when ns has no
// log and [ErrTreeMismatch] when cp is not one of its tree heads.
func CheckLogTree(ctx context.Context, st storage.Storage, ns string, cp translog.Checkpoint) (translog.Checkpoint, error) {
	return readLog(func() (translog.Checkpoint, error) {
		_, cur, err := LogCheckpoint(ctx, st, ns)
		if err != nil {
			return translog.Checkpoint{}, err
		}
		switch {
		case cp.Origin != cur.Origin || cp.Size > cur.Size:
			return cur, ErrTreeMismatch
		case cp.Size == cur.Size:
			if cp.Hash != cur.Hash {
				return cur, ErrTreeMismatch
			}
			return cur, nil
		case cp.Size == 0:
			return cur, nil
		}
		h, err := tlog.TreeHash(cp.Size, tlog.TileHashReader(cur.Tree(), logReader{st: st, ns: ns}))
		if err != nil {
			return cur, err
		}
		if h != cp.Hash {
			return cur, ErrTreeMismatch
		}
		return cur, nil
	})
}

// AddCosignatures keeps the cosignatures sigs (verified by the caller,
// each of a distinct configured witness) of the checkpoint cp of ns's log
// (checked by [CheckLogTree]). Per witness, the cosignatures of its
// [keptHeadsPerWitness] largest trees are kept, for each tree the newest.
// configured reports whether a witness ([translog.WitnessID]) is still
// configured; the others' are dropped. The document is updated with a
// compare-and-swap, so replicas sharing the storage do not lose each
// other's writes.
func (s *Store) AddCosignatures(ctx context.Context, ns string, cp translog.Checkpoint, sigs []note.Signature, configured func(witness string) bool) error {
	add := make([]storedCosignature, 0, len(sigs))
	for _, sig := range sigs {
		t, err := translog.CosignatureTime(sig)
		if err != nil {
			return err
		}
		add = append(add, storedCosignature{Witness: translog.WitnessID(sig.Name, sig.Hash), Size: cp.Size, Hash: cp.Hash.String(),
			Time: t.Unix(), Line: "— " + sig.Name + " " + sig.Base64})
	}
	return s.update(ctx, layout.LogCosignatures(ns), func(cur []byte) ([]byte, error) {
		d, err := parseCosignatures(cur)
		if err != nil {
			d = cosignaturesDoc{} // a corrupt document is replaced
		}
		d.Cosignatures = slices.DeleteFunc(d.Cosignatures, func(c storedCosignature) bool { return !configured(c.Witness) })
		changed := false
		for _, a := range add {
			i := slices.IndexFunc(d.Cosignatures, func(c storedCosignature) bool { return c.Witness == a.Witness && c.Size == a.Size })
			switch {
			case i < 0:
				d.Cosignatures = append(d.Cosignatures, a)
			case d.Cosignatures[i].Time <= a.Time:
				d.Cosignatures[i] = a
			default:
				continue // it keeps a newer one
			}
			changed = true
		}
		if !changed {
			return nil, nil
		}
		// Per witness its largest trees first; then the oldest beyond
		// the few kept are dropped.
		slices.SortFunc(d.Cosignatures, func(a, b storedCosignature) int {
			if c := strings.Compare(a.Witness, b.Witness); c != 0 {
				return c
			}
			return cmp.Compare(b.Size, a.Size)
		})
		var kept []storedCosignature
		witnesses, ofThis := 0, 0
		for i, c := range d.Cosignatures {
			if i == 0 || d.Cosignatures[i-1].Witness != c.Witness {
				witnesses, ofThis = witnesses+1, 0
			}
			if witnesses > translog.MaxCosignatures {
				break
			}
			if ofThis++; ofThis <= keptHeadsPerWitness {
				kept = append(kept, c)
			}
		}
		d.Cosignatures = kept
		// Names that JSON escapes could make it larger than readers
		// read: the smallest trees go first.
		for {
			b, err := json.Marshal(d)
			if err != nil || len(b) <= maxCosignaturesDoc || len(d.Cosignatures) == 0 {
				return b, err
			}
			smallest := 0
			for i, c := range d.Cosignatures {
				if c.Size < d.Cosignatures[smallest].Size {
					smallest = i
				}
			}
			d.Cosignatures = slices.Delete(d.Cosignatures, smallest, smallest+1)
		}
	})
}

// CosignedCheckpoint returns ns's signed checkpoint (as [LogCheckpoint])
// with the stored witness cosignatures of exactly that tree head (size
// and hash) added as signature lines, at most [translog.MaxCosignatures].
// Cosignatures of an older tree are left out: the witnesses cosign again.
// A corrupt cosignatures document is ignored (the next cosignature taken
// replaces it).
func CosignedCheckpoint(ctx context.Context, st storage.Storage, ns string) ([]byte, translog.Checkpoint, error) {
	signed, cp, err := LogCheckpoint(ctx, st, ns)
	if err != nil {
		return nil, cp, err
	}
	b, err := logReader{st: st, ns: ns}.get(ctx, layout.LogCosignatures(ns), maxCosignaturesDoc)
	if errors.Is(err, storage.ErrNotFound) {
		return signed, cp, nil
	}
	if err != nil {
		return nil, cp, err
	}
	d, err := parseCosignatures(b)
	if err != nil {
		// The checkpoint is served without them (clients that require
		// witnesses refuse it, saying so); the next cosignature the
		// server takes replaces the document.
		return signed, cp, nil
	}
	out := bytes.Clone(signed)
	n := 0
	for _, c := range d.Cosignatures {
		if c.Size != cp.Size || c.Hash != cp.Hash.String() || n == translog.MaxCosignatures {
			continue
		}
		out = append(out, c.Line+"\n"...)
		n++
	}
	if len(out) > translog.MaxCheckpointSize {
		return signed, cp, nil
	}
	return out, cp, nil
}
