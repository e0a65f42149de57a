package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/changelog"
	"github.com/jigkit/jig/registryserver/storage"
)

// claimDoc is the content of a claim.
type claimDoc struct {
	// ID names this publish attempt.
	ID string `json:"id"`
	// Owner names the publishing process (see [WithOwner]).
	Owner string `json:"owner,omitempty"`
	// Host and PID are for operators reading a claim; no decision uses
	// them (a pid means nothing across pid namespaces and containers).
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	Started time.Time `json:"started"`
	// Heartbeat is when the publisher last said it is alive. Claims of
	// jig-servers older than heartbeats have none.
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// Seq counts heartbeats, so every refresh changes the content.
	Seq int64 `json:"seq,omitempty"`
}

// claimView is a claim as read from the storage.
type claimView struct {
	doc     claimDoc
	valid   bool      // the content parsed and has an id
	modTime time.Time // the storage's modification time
	etag    string
}

// readClaim reads a claim document, which may be anything: a claim that
// cannot be parsed is not valid, never an error.
func readClaim(r io.Reader, info storage.Info) claimView {
	cv := claimView{modTime: info.ModTime, etag: info.ETag}
	b, err := io.ReadAll(io.LimitReader(r, maxClaimDoc+1))
	if err != nil || len(b) > maxClaimDoc {
		return cv
	}
	if json.Unmarshal(b, &cv.doc) == nil && cv.doc.ID != "" {
		cv.valid = true
	}
	return cv
}

// decide is the takeover rule: whether a claim may be taken over now, and
// why. self is this process's owner id, active whether the claim is one of
// this process's running publishes.
func decide(c claimView, now time.Time, ttl, legacy time.Duration, self string, active bool, liveness func(string) Liveness) (take bool, reason string) {
	switch {
	case !c.valid:
		if now.Sub(c.modTime) > ttl {
			return true, "unreadable claim older than the claim TTL"
		}
		return false, "unreadable claim, recently written"
	case c.doc.Owner != "" && c.doc.Owner == self:
		if active {
			return false, "being published by this process"
		}
		return true, "left behind by this process"
	case c.doc.Owner != "" && liveness(c.doc.Owner) == LivenessDead:
		return true, "the publishing process is gone"
	case c.doc.Heartbeat.IsZero():
		// A jig-server older than heartbeats never refreshes its claim.
		started := c.doc.Started
		if started.IsZero() || started.After(now.Add(ttl)) {
			started = c.modTime
		}
		if now.Sub(started) > legacy {
			return true, "claim without heartbeats older than the stale limit"
		}
		return false, "claim without heartbeats, recently started"
	}
	hb := c.doc.Heartbeat
	if hb.After(now.Add(ttl)) {
		hb = c.modTime // a heartbeat from the future is not believed
	}
	if now.Sub(hb) > ttl {
		return true, "no heartbeat within the claim TTL"
	}
	return false, "heartbeat within the claim TTL"
}

func (s *Store) judge(c claimView) (take bool, reason string) {
	return decide(c, s.now(), s.ttl, s.staleAfter, s.owner, s.isActive(c.doc.ID), s.liveness)
}

func (s *Store) setActive(id string, on bool) {
	s.activeMu.Lock()
	defer s.activeMu.Unlock()
	if on {
		s.active[id] = struct{}{}
	} else {
		delete(s.active, id)
	}
}

func (s *Store) isActive(id string) bool {
	s.activeMu.Lock()
	defer s.activeMu.Unlock()
	_, ok := s.active[id]
	return ok
}

// heldClaim is a claim this process holds. With conditional writes it is
// refreshed by a heartbeat until it is released; when a refresh finds it
// taken over, onLost ends the publish.
type heldClaim struct {
	s      *Store
	key    string
	local  bool // a process-local lock (no conditional writes)
	onLost context.CancelCauseFunc
	base   context.Context

	mu   sync.Mutex
	doc  claimDoc
	etag string

	lost     atomic.Bool
	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}
}

// claim takes the exclusive right to publish under key: a new claim, or
// one that [decide] lets this process take over. It returns
// ErrVersionExists when someone else holds it.
func (s *Store) claim(ctx context.Context, key string, onLost context.CancelCauseFunc) (*heldClaim, error) {
	if s.cp == nil {
		if !s.locks.tryLock(key) {
			return nil, ErrVersionExists
		}
		return &heldClaim{s: s, key: key, local: true}, nil
	}
	c, err := s.acquire(ctx, key, "", onLost)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, storage.ErrPrecondition) {
		return nil, fmt.Errorf("publish: claiming the version: %w", err)
	}
	// Someone holds the claim. Take it over only when the rule says so.
	rc, info, err := s.st.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrVersionExists // released just now: the other publish finished
	}
	if err != nil {
		return nil, fmt.Errorf("publish: reading the claim: %w", err)
	}
	cv := readClaim(rc, info)
	rc.Close()
	take, reason := s.judge(cv)
	if !take {
		return nil, ErrVersionExists
	}
	c, err = s.acquire(ctx, key, info.ETag, onLost)
	if errors.Is(err, storage.ErrPrecondition) {
		return nil, ErrVersionExists // another publisher took it over first
	}
	if err != nil {
		return nil, fmt.Errorf("publish: taking over a claim: %w", err)
	}
	s.logTakeover(key, cv, reason)
	return c, nil
}

func (s *Store) logTakeover(key string, cv claimView, reason string) {
	s.log.Warn("took over a publish claim", zap.String("claim", key), zap.String("reason", reason),
		zap.String("owner", cv.doc.Owner), zap.String("host", cv.doc.Host), zap.Int("pid", cv.doc.PID),
		zap.Time("heartbeat", cv.doc.Heartbeat))
}

// acquire writes a new claim of this process at key, conditionally on
// ifMatch as [storage.ConditionalPutter.PutIf] does, and starts its
// heartbeat.
func (s *Store) acquire(ctx context.Context, key, ifMatch string, onLost context.CancelCauseFunc) (*heldClaim, error) {
	now := s.now().UTC()
	doc := claimDoc{ID: randomID(), Owner: s.owner, Host: s.host, PID: s.pid, Started: now, Heartbeat: now}
	body, _ := json.Marshal(doc)
	s.setActive(doc.ID, true)
	etag, err := s.cp.PutIf(ctx, key, bytes.NewReader(body), int64(len(body)), ifMatch)
	if err != nil {
		s.setActive(doc.ID, false)
		return nil, err
	}
	c := &heldClaim{
		s: s, key: key, onLost: onLost, base: context.WithoutCancel(ctx),
		doc: doc, etag: etag, quit: make(chan struct{}), done: make(chan struct{}),
	}
	go c.beat(s.ttl / 3)
	return c, nil
}

// beat refreshes the claim every interval until stop. A refresh that finds
// the claim changed or gone, or no successful refresh for a whole TTL,
// means the claim is lost.
func (c *heldClaim) beat(interval time.Duration) {
	defer close(c.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
		err := c.refresh(interval)
		switch {
		case err == nil:
			lastOK = time.Now()
		case errors.Is(err, storage.ErrPrecondition) || errors.Is(err, storage.ErrNotFound):
			c.markLost("another publisher took the claim over", err)
			return
		case time.Since(lastOK) >= c.s.ttl*2/3:
			// Give up before others may take the claim over.
			c.markLost("no heartbeat reached the storage within the claim TTL", err)
			return
		default:
			c.s.log.Warn("publish heartbeat failed", zap.String("claim", c.key), zap.Error(err))
		}
	}
}

func (c *heldClaim) refresh(timeout time.Duration) error {
	c.mu.Lock()
	doc, etag := c.doc, c.etag
	c.mu.Unlock()
	doc.Heartbeat = c.s.now().UTC()
	doc.Seq++
	body, _ := json.Marshal(doc)
	ctx, cancel := context.WithTimeout(c.base, timeout)
	defer cancel()
	next, err := c.s.cp.PutIf(ctx, c.key, bytes.NewReader(body), int64(len(body)), etag)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.doc, c.etag = doc, next
	c.mu.Unlock()
	return nil
}

func (c *heldClaim) markLost(why string, err error) {
	c.lost.Store(true)
	c.s.log.Error("publish lost its claim; stopping it", zap.String("claim", c.key), zap.String("reason", why), zap.Error(err))
	if c.onLost != nil {
		c.onLost(ErrClaimLost)
	}
}

func (c *heldClaim) isLost() bool { return c.lost.Load() }

// stop ends the heartbeat and waits for a refresh in flight.
func (c *heldClaim) stop() {
	c.stopOnce.Do(func() {
		if c.local {
			c.s.locks.unlock(c.key)
			return
		}
		close(c.quit)
		<-c.done
		c.s.setActive(c.doc.ID, false)
	})
}

// release gives the claim back: it deletes it, unless it is no longer
// this publish's.
func (c *heldClaim) release(ctx context.Context) error {
	c.stop()
	if c.local || c.isLost() {
		return nil
	}
	rc, info, err := c.s.st.Get(ctx, c.key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cv := readClaim(rc, info)
	rc.Close()
	if !cv.valid || cv.doc.ID != c.doc.ID {
		c.s.log.Warn("publish claim was taken over; leaving it to its new holder", zap.String("claim", c.key))
		return nil
	}
	return c.s.st.Delete(ctx, c.key)
}

// Recovery is what one [Store.Recover] did.
type Recovery struct {
	// Claims is the number of claims of gone publishers it took over
	// and released.
	Claims int
	// Removed is the number of keys of unfinished versions it deleted.
	Removed int
	// Listed is the number of committed but unlisted versions it added
	// to their versions.json.
	Listed int
}

// Recover finishes the publishes whose publisher is gone, so that their
// version can be published again at once and no half-written files stay
// in the storage. For each claim that [decide] lets this process take over
// (its owner is known to be dead, or it has had no heartbeat for the claim
// TTL) it takes the claim over, then lists the version when its
// registry.json exists (the publisher died after committing) or deletes
// what the publisher wrote under the version folder, and releases the
// claim. Claims of live publishes are left alone. Without conditional
// writes, claims live in memory and die with the process: there is
// nothing to recover.
func (s *Store) Recover(ctx context.Context) (Recovery, error) {
	var rec Recovery
	if s.cp == nil {
		return rec, nil
	}
	keys, err := s.st.List(ctx, layout.ClaimsDir)
	if err != nil {
		return rec, fmt.Errorf("publish: listing claims: %w", err)
	}
	var errs []error
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return rec, err
		}
		if err := s.recoverClaim(ctx, key, &rec); err != nil {
			errs = append(errs, err)
		}
	}
	return rec, errors.Join(errs...)
}

func (s *Store) recoverClaim(ctx context.Context, key string, rec *Recovery) (err error) {
	rc, info, err := s.st.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("publish: reading claim %s: %w", key, err)
	}
	cv := readClaim(rc, info)
	rc.Close()
	take, reason := s.judge(cv)
	if !take {
		return nil
	}
	ns, path, version, ok := layout.ParseClaim(key)
	if !ok {
		// Not a key jig writes, and no version to clean up.
		s.log.Warn("removing a stray key in the claims folder", zap.String("key", key), zap.String("reason", reason))
		return s.st.Delete(ctx, key)
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c, err := s.acquire(pctx, key, info.ETag, cancel)
	if errors.Is(err, storage.ErrPrecondition) {
		return nil // changed meanwhile: a live publisher, or another recoverer
	}
	if err != nil {
		return fmt.Errorf("publish: taking over claim %s: %w", key, err)
	}
	s.logTakeover(key, cv, reason)
	defer func() {
		if err != nil || c.isLost() {
			c.stop()
			return
		}
		if rerr := c.release(ctx); rerr != nil {
			err = fmt.Errorf("publish: releasing claim %s: %w", key, rerr)
			return
		}
		rec.Claims++
	}()
	exists, err := s.exists(pctx, layout.Manifest(ns, path, version))
	if err != nil {
		return err
	}
	if exists {
		// Stored but perhaps not logged: the publisher died between the
		// two. Logged (once; a logged version is not appended again)
		// before it is listed.
		if err := s.logStored(pctx, ns, path, version); err != nil {
			return fmt.Errorf("publish: logging %s: %w", key, err)
		}
		if _, err := s.addVersion(pctx, layout.Versions(ns, path), version); err != nil {
			return err
		}
		// The publisher may have died before recording it: recorded
		// again (a record applied twice changes nothing), or the claim
		// stays for the next recovery.
		if err := s.recordChange(pctx, changelog.Change{Namespace: ns, Path: path}); err != nil {
			return fmt.Errorf("publish: recording %s in the change log: %w", key, err)
		}
		rec.Listed++
		return nil
	}
	n, err := s.clearVersionDir(pctx, layout.VersionDir(ns, path, version))
	rec.Removed += n
	return err
}
