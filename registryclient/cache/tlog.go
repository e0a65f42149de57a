package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/jigkit/jig/internal/safefile"
)

// The transparency-log memory: for each log a server serves (keyed by
// the caller, e.g. "<server URL> <origin>"), the largest tree head seen,
// against which the next one must be consistent (a fork or a rollback is
// refused), and the offline proof of each version verified, so that
// --offline and --frozen verify without the network. It lives in
// <dir>/logs.json beside the content and survives [Cache.Clean], like the
// signed-versions memory, under its own lock (<dir>/logs.lock).
const (
	logsFile = "logs.json"
	logsLock = "logs.lock"
	// MaxLogProofs bounds the proofs remembered; beyond it the oldest
	// are dropped (a version without one is looked up again online).
	MaxLogProofs = 8192
	maxLogsBytes = 64 << 20
)

// LogHead is a remembered tree head of one log.
type LogHead struct {
	Size int64 `json:"size"`
	// Hash is the root hash, base64 as checkpoints write it.
	Hash string `json:"hash"`
	// Checkpoint is the signed checkpoint it came from.
	Checkpoint string `json:"checkpoint"`
}

type logsDoc struct {
	Heads  map[string]*LogHead `json:"heads"`
	Proofs map[string]string   `json:"proofs"`
	// Order lists the proof keys oldest first, to drop beyond MaxLogProofs.
	Order []string `json:"order"`
	// Monitors are the tree heads log monitors saw last, by monitor
	// (server, log and signing key).
	Monitors map[string]*LogHead `json:"monitors,omitempty"`
}

func (c *Cache) readLogs() (*logsDoc, error) {
	d := &logsDoc{Heads: map[string]*LogHead{}, Proofs: map[string]string{}}
	b, err := safefile.ReadFileNoFollow(filepath.Join(c.dir, logsFile), maxLogsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the transparency-log memory: %w", err)
	}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("the transparency-log memory %s is damaged (%v); delete it to start over (fork detection then restarts from the tree heads seen next)", filepath.Join(c.dir, logsFile), err)
	}
	if d.Heads == nil {
		d.Heads = map[string]*LogHead{}
	}
	if d.Proofs == nil {
		d.Proofs = map[string]string{}
	}
	return d, nil
}

// readLogsMemo is readLogs for readers: the parsed memory is reused
// while the file is the same one (every write renames a new file into
// place). The result must not be changed.
func (c *Cache) readLogsMemo() (*logsDoc, error) {
	return c.logsMemo.read(filepath.Join(c.dir, logsFile), c.readLogs)
}

// LogHead returns the largest tree head remembered for log key.
func (c *Cache) LogHead(key string) (LogHead, bool, error) {
	d, err := c.readLogsMemo()
	if err != nil {
		return LogHead{}, false, err
	}
	h, ok := d.Heads[key]
	if !ok || h == nil {
		return LogHead{}, false, nil
	}
	return *h, true, nil
}

// LogProof returns the offline proof remembered under key.
func (c *Cache) LogProof(key string) (string, bool, error) {
	d, err := c.readLogsMemo()
	if err != nil {
		return "", false, err
	}
	p, ok := d.Proofs[key]
	return p, ok, nil
}

// RecordLog remembers head as log headKey's tree head when it is larger
// than the one remembered (the caller checked it is consistent with it),
// and proof under proofKey (none when proofKey is "").
func (c *Cache) RecordLog(ctx context.Context, headKey string, head LogHead, proofKey, proof string) error {
	var proofs map[string]string
	if proofKey != "" {
		proofs = map[string]string{proofKey: proof}
	}
	return c.RecordLogProofs(ctx, headKey, head, proofs)
}

// RecordLogProofs is [Cache.RecordLog] for many proofs (by key), in one
// write of the memory. An empty headKey remembers the proofs only (a
// bundle's, whose tree head was not checked against the one seen).
func (c *Cache) RecordLogProofs(ctx context.Context, headKey string, head LogHead, proofs map[string]string) error {
	return c.updateLogs(ctx, func(d *logsDoc) {
		recordLogProofs(d, headKey, head, proofs)
	})
}

func recordLogProofs(d *logsDoc, headKey string, head LogHead, proofs map[string]string) {
	if cur := d.Heads[headKey]; headKey != "" && (cur == nil || head.Size > cur.Size) {
		d.Heads[headKey] = &head
	}
	for _, proofKey := range slices.Sorted(maps.Keys(proofs)) {
		if _, had := d.Proofs[proofKey]; !had {
			d.Order = append(d.Order, proofKey)
		}
		d.Proofs[proofKey] = proofs[proofKey]
	}
	for len(d.Order) > MaxLogProofs {
		delete(d.Proofs, d.Order[0])
		d.Order = d.Order[1:]
	}
}

// updateLogs changes the memory with change under its lock, and writes it.
func (c *Cache) updateLogs(ctx context.Context, change func(*logsDoc)) error {
	c.signedMu.Lock()
	defer c.signedMu.Unlock()
	unlock, err := c.lockFile(ctx, logsLock, "the transparency-log memory")
	if err != nil {
		return err
	}
	defer unlock()
	d, err := c.readLogs()
	if err != nil {
		return err
	}
	change(d)
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return c.writeAtomic(filepath.Join(c.dir, logsFile), append(b, '\n'))
}

// MonitorHead returns the tree head the log monitor key saw last.
func (c *Cache) MonitorHead(key string) (LogHead, bool, error) {
	d, err := c.readLogsMemo()
	if err != nil {
		return LogHead{}, false, err
	}
	h, ok := d.Monitors[key]
	if !ok || h == nil {
		return LogHead{}, false, nil
	}
	return *h, true, nil
}

// RecordMonitorHead remembers head as the tree head the log monitor key
// saw last (the caller checked it extends the one remembered).
func (c *Cache) RecordMonitorHead(ctx context.Context, key string, head LogHead) error {
	return c.updateLogs(ctx, func(d *logsDoc) {
		if d.Monitors == nil {
			d.Monitors = map[string]*LogHead{}
		}
		d.Monitors[key] = &head
	})
}
