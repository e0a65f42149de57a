package registryclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry/translog"
)

// maxWitnessState bounds a witness's state file.
const maxWitnessState = 1 << 20

// WitnessReport is what [Client.CosignLog] did.
type WitnessReport struct {
	// Log is the log's origin ("registry.example.com/@acme"), Server the
	// base URL, Witness the witness's name.
	Log     string `json:"log"`
	Server  string `json:"server"`
	Witness string `json:"witness"`
	// From is the size of the tree the witness cosigned before (0 the
	// first time), Size and Hash the tree head it cosigned now.
	From int64  `json:"from"`
	Size int64  `json:"size"`
	Hash string `json:"hash"`
	// Current is whether the server serves the cosignature with its
	// checkpoint (the log did not grow meanwhile).
	Current bool `json:"current"`
}

// witnessState is a witness's state file: per log origin, the largest
// tree head it cosigned.
type witnessState struct {
	Logs map[string]witnessHead `json:"logs"`
}

type witnessHead struct {
	Size int64  `json:"size"`
	Hash string `json:"hash"`
}

// CosignLog witnesses namespace ns's transparency log: it reads the
// checkpoint, verifies it with the namespace's trusted log key
// ([Trust.Log], which it requires), checks that it extends the largest
// tree head this witness cosigned of that log (kept in the state file
// statePath, per origin; read from the log's tiles, each checked
// against the new tree), records the new head in the state file (written
// atomically, before the cosignature leaves), cosigns it with cosigner
// and gives the server the cosignature. A checkpoint that does not
// extend the one cosigned before is a [*translog.ForkError] naming both
// tree heads, and nothing is cosigned or written.
//
// API: GET /log/@ns/checkpoint, GET /log/@ns/tile/…, POST /log/@ns/cosignature
func (c *Client) CosignLog(ctx context.Context, ns string, cosigner *translog.Cosigner, statePath string) (*WitnessReport, error) {
	if c.logKey == nil {
		return nil, fmt.Errorf("%w %s; a witness verifies the log with it", ErrNoLogKey, ns)
	}
	if c.opts.mode == Offline {
		return nil, fmt.Errorf("%w: a witness reads the server's log", ErrOffline)
	}
	origin := translog.Origin(c.logKey.Name(), ns)
	_, cp, err := c.logCheckpoint(ctx, ns, origin)
	if err != nil {
		return nil, err
	}
	// One witness run at a time per state file: two could each check
	// against the same remembered head, and the slower one put back a
	// smaller one.
	unlock, err := flock.Acquire(ctx, statePath+".lock", 0)
	if errors.Is(err, flock.ErrBusy) {
		return nil, fmt.Errorf("another witness run is using the state %s; let it finish, then run again", statePath)
	}
	if err != nil {
		return nil, fmt.Errorf("locking the witness state: %w", err)
	}
	defer unlock()
	st, err := readWitnessState(statePath)
	if err != nil {
		return nil, err
	}
	rep := &WitnessReport{Log: origin, Server: c.baseStr, Witness: cosigner.Name(), Size: cp.Size, Hash: cp.Hash.String()}
	if prev, ok := st.Logs[origin]; ok {
		h, err := tlog.ParseHash(prev.Hash)
		if err != nil || prev.Size < 0 {
			return nil, fmt.Errorf("the witness state %s is damaged (log %s); restore it from a backup: starting over would cosign whatever the server shows now", statePath, origin)
		}
		old := translog.Checkpoint{Origin: origin, Size: prev.Size, Hash: h}
		if err := extendsByTiles(tlog.TileHashReader(cp.Tree(), &httpTiles{c: c, ctx: ctx, ns: ns}), old, cp); err != nil {
			return nil, err
		}
		rep.From = prev.Size
	}
	st.Logs[origin] = witnessHead{Size: cp.Size, Hash: cp.Hash.String()}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := safefile.WriteFileAtomic(statePath, append(data, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("writing the witness state: %w", err)
	}
	body, err := note.Sign(&note.Note{Text: string(cp.Marshal())}, cosigner)
	if err != nil {
		return nil, err
	}
	var res translog.CosignatureResult
	err = c.getJSON(ctx, request{method: http.MethodPost, path: "/log/" + ns + "/cosignature", registry: ns, maxBytes: 64 << 10,
		header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: body}, &res)
	if err != nil {
		return nil, err
	}
	rep.Current = res.Current
	return rep, nil
}

// readWitnessState reads a witness's state file; a missing file is an
// empty state (the witness's first run).
func readWitnessState(path string) (witnessState, error) {
	st := witnessState{Logs: map[string]witnessHead{}}
	b, err := safefile.ReadFile(path, maxWitnessState)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading the witness state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("the witness state %s is damaged (%v); restore it from a backup: starting over would cosign whatever the server shows now", path, err)
	}
	if st.Logs == nil {
		st.Logs = map[string]witnessHead{}
	}
	return st, nil
}
