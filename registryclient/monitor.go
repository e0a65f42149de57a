package registryclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient/cache"
)

// Unsigned names, in a [MonitorReport], the versions logged without a
// signature.
const Unsigned = "unsigned"

// ErrNoLogKey is returned by [Client.MonitorLog] for a namespace with no
// trusted log key ([Trust.Log]).
var ErrNoLogKey = errors.New("no transparency log key is trusted for")

// MonitoredVersion is one version a log monitor found.
type MonitoredVersion struct {
	// Version is "@ns/<path>@<version>".
	Version string `json:"version"`
	// Index is its record's index in the namespace's log.
	Index int64 `json:"index"`
	// Signers are the fingerprints of the keys that signed it; empty
	// when unsigned.
	Signers []string `json:"signers"`
	// Time is when the server logged it.
	Time time.Time `json:"time"`
	// Known is whether the publisher said it published it.
	Known bool `json:"known"`
}

// MonitorReport is what [Client.MonitorLog] found.
type MonitorReport struct {
	// Log is the log's origin ("registry.example.com/@acme"), Server the
	// base URL.
	Log    string `json:"log"`
	Server string `json:"server"`
	// Key is the fingerprint of the signing key monitored.
	Key string `json:"key"`
	// From and To are the tree sizes the run read between: the records
	// From to To-1, new since the last run (From is 0 on the first).
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Versions are the new records signed by Key or by no key, in log
	// order; Unknown counts those not Known.
	Versions []MonitoredVersion `json:"versions"`
	Unknown  int                `json:"unknown"`
}

// MonitorLog reads the records appended to namespace ns's transparency
// log since the last run for this server, log and key (kept in the
// cache), and returns those signed by the key of fingerprint key
// ("SHA256:…") or by no key: what a publisher must know of, since a
// version signed with its key, or unsigned in its namespace, that it did
// not publish means a stolen key or a server publishing in its name.
// known says which versions ("@ns/<path>@<version>") the publisher knows.
//
// It reads the checkpoint (signed by the namespace's trusted log key,
// [Trust.Log], which it requires) and the log's tiles, not lookups: its
// cost follows the records appended since the last run. The new tree
// must extend the one the last run saw (a [*translog.ForkError]
// otherwise); every record read is checked against the tree. The new
// tree head is remembered only when all of this holds.
//
// API: GET /log/@ns/checkpoint, GET /log/@ns/tile/…
func (c *Client) MonitorLog(ctx context.Context, ns, key string, known func(version string) bool) (*MonitorReport, error) {
	if c.logKey == nil {
		return nil, fmt.Errorf("%w %s; a monitor verifies the log with it", ErrNoLogKey, ns)
	}
	mem := c.opts.cache
	if mem == nil {
		return nil, errNoCache
	}
	if c.opts.mode == Offline {
		return nil, fmt.Errorf("%w: a log monitor reads the server's log", ErrOffline)
	}
	origin := translog.Origin(c.logKey.Name(), ns)
	stateKey := c.baseStr + " " + origin + " " + key
	signed, cp, err := c.logCheckpoint(ctx, ns, origin)
	if err != nil {
		return nil, err
	}
	if _, err := c.witnesses.Check(signed, cp); err != nil {
		return nil, err
	}
	rep := &MonitorReport{Log: origin, Server: c.baseStr, Key: key, To: cp.Size, Versions: []MonitoredVersion{}}
	tiles := &httpTiles{c: c, ctx: ctx, ns: ns}
	hr := tlog.TileHashReader(cp.Tree(), tiles)
	prev, have, err := mem.MonitorHead(stateKey)
	if err != nil {
		return nil, err
	}
	if have {
		old, err := rememberedCheckpoint(prev, origin)
		if err != nil {
			return nil, err
		}
		if err := extendsByTiles(hr, old, cp); err != nil {
			return nil, err
		}
		rep.From = old.Size
	}
	const width = 1 << translog.TileHeight
	for start := rep.From; start < cp.Size; {
		n := start / width
		end := min((n+1)*width, cp.Size)
		t := tlog.Tile{H: translog.TileHeight, L: -1, N: n, W: int(end - n*width)}
		data, err := tiles.get(t, int64(t.W)*(translog.MaxRecordSize+1))
		if err != nil {
			return nil, err
		}
		texts, err := translog.SplitDataTile(data)
		if err != nil || len(texts) != t.W {
			return nil, fmt.Errorf("the log %s: data tile %s holds %d records, want %d", origin, t.Path(), len(texts), t.W)
		}
		var idx []int64
		for i := start; i < end; i++ {
			idx = append(idx, tlog.StoredHashIndex(0, i))
		}
		hashes, err := hr.ReadHashes(idx)
		if err != nil {
			return nil, fmt.Errorf("reading the log %s: %w", origin, err)
		}
		for i := start; i < end; i++ {
			text := texts[i-n*width]
			if tlog.RecordHash(text) != hashes[i-start] {
				return nil, fmt.Errorf("the log %s: record %d of data tile %s is not the one its tree holds; the server's log is corrupt or tampered with", origin, i, t.Path())
			}
			rec, err := translog.ParseRecord(text)
			if err != nil {
				return nil, fmt.Errorf("the log %s: record %d: %w", origin, i, err)
			}
			if rec.Namespace != ns {
				return nil, fmt.Errorf("the log %s: record %d is of %s, another namespace", origin, i, rec.ID())
			}
			if len(rec.Signers) > 0 && !slices.Contains(rec.Signers, key) {
				continue
			}
			v := MonitoredVersion{Version: rec.ID(), Index: i, Signers: nonNilStrings(rec.Signers), Time: rec.Time, Known: known != nil && known(rec.ID())}
			if !v.Known {
				rep.Unknown++
			}
			rep.Versions = append(rep.Versions, v)
		}
		start = end
	}
	head := cache.LogHead{Size: cp.Size, Hash: cp.Hash.String(), Checkpoint: string(signed)}
	if err := mem.RecordMonitorHead(ctx, stateKey, head); err != nil {
		return nil, err
	}
	return rep, nil
}

// extendsByTiles checks that cp (whose tree hr reads, checking each
// tile against cp's hash) extends old: the tree hash of old's size in
// cp's tree is old's. It returns a [*translog.ForkError] when it is not.
func extendsByTiles(hr tlog.HashReader, old, cp translog.Checkpoint) error {
	if cp.Size < old.Size {
		return &translog.ForkError{Remembered: old, Got: cp}
	}
	if old.Size == 0 {
		return nil
	}
	h, err := tlog.TreeHash(old.Size, hr)
	if err != nil {
		return fmt.Errorf("reading the log %s: %w", cp.Origin, err)
	}
	if h != old.Hash {
		return &translog.ForkError{Remembered: old, Got: cp}
	}
	return nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// getBytes GETs path and returns the body, of at most max bytes.
func (c *Client) getBytes(ctx context.Context, path, label string, limit int64) ([]byte, error) {
	resp, err := c.do(ctx, request{path: path, registry: label, maxBytes: limit})
	if err != nil {
		return nil, err
	}
	return resp.body, nil
}

// httpTiles reads a namespace's log tiles from the server, for
// tlog.TileHashReader, which checks them against the tree.
type httpTiles struct {
	c   *Client
	ctx context.Context
	ns  string
}

func (r *httpTiles) Height() int { return translog.TileHeight }

func (r *httpTiles) get(t tlog.Tile, limit int64) ([]byte, error) {
	b, err := r.c.getBytes(r.ctx, "/log/"+r.ns+"/"+t.Path(), r.ns, limit)
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == 404 {
		return nil, fmt.Errorf("the server does not serve tile %s of the log of %s, which its checkpoint covers: %w", t.Path(), r.ns, err)
	}
	return b, err
}

func (r *httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := r.get(t, int64(t.W)*tlog.HashSize)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (r *httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// ParseKnownVersions reads a list of versions a publisher knows of: one
// "@ns/<path>@<version>" per line; blank lines and lines starting with
// "#" are skipped. A line that is not a version is an error naming it.
func ParseKnownVersions(text []byte) (map[string]bool, error) {
	out := map[string]bool{}
	for n, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := translog.ParseVersionID(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not a version @ns/<path>@<version>", n+1, line)
		}
		out[v.String()] = true
	}
	return out, nil
}

// logCheckpoint reads ns's current checkpoint (GET /log/@ns/checkpoint)
// and opens it with the trusted log key: the signed note as served, and
// the checkpoint it holds, of the log origin.
func (c *Client) logCheckpoint(ctx context.Context, ns, origin string) ([]byte, translog.Checkpoint, error) {
	signed, err := c.getBytes(ctx, "/log/"+ns+"/checkpoint", ns, translog.MaxCheckpointSize)
	if err != nil {
		return nil, translog.Checkpoint{}, err
	}
	cp, err := translog.OpenCheckpoint(signed, c.logKey, origin)
	return signed, cp, err
}
