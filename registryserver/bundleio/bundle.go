// Package bundleio moves the published versions of a namespace between
// storages as a bundle (package [github.com/jigkit/jig/registry/bundle]),
// without a server: [Export] writes them from a storage, [Import] checks a
// whole bundle (digests, signatures against the signing policy, limits)
// and stores its versions through the publish protocol of an upload,
// writing nothing on any problem. jig-server mirror export|import run
// them.
package bundleio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/storage"
)

// ExportOptions selects what [Export] writes.
type ExportOptions struct {
	// Namespace is the namespace exported ("@acme"); required.
	Namespace string
	// Registries are the registry paths exported ("runtimes/node"); nil
	// exports every registry of the namespace.
	Registries []string
	// Since, when not zero, exports only the versions whose registry.json
	// was stored at or after it (the storage's modification time).
	Since time.Time
	// SignedOnly leaves out the versions stored without a signature,
	// listing them in [Summary.Refused], so that a server whose
	// SIGNERS_DIR requires signed versions can take the bundle.
	SignedOnly bool
}

// Refusal is a version an export left out or an import skipped,
// and why.
type Refusal struct {
	Version string `json:"version"` // "@ns/<path>@<version>"
	Reason  string `json:"reason"`
}

// Summary is what [Export] wrote or [Import] did.
type Summary struct {
	// Versions are the versions exported or imported ("@ns/<path>@<version>").
	Versions []string
	// Skipped are the versions an import found already stored, with the
	// same digests.
	Skipped []string
	// Refused are the versions an export left out ([ExportOptions.SignedOnly])
	// or an import skipped ([ImportOptions.SkipRefused]), with the reason.
	Refused []Refusal
	// Entries and Bytes count what an export wrote.
	Entries int
	Bytes   int64
}

// maxStoredDocument bounds a JSON document (versions.json, a digest
// index) read from the storage by an export or import.
const maxStoredDocument = 16 << 20

// Export writes the committed versions of sel.Namespace that sel
// selects, with their digest indexes, signatures and version lists, to w
// as a bundle (package registry/bundle). The output depends only on the
// stored content, so two exports of one storage are byte-identical. A
// version stored without a digest index (by the reference tool) gets one
// computed from its stored files. Versions being published (no
// registry.json yet) are left out. Write w to a temporary file and rename
// it once Export returns nil.
func Export(ctx context.Context, st storage.Storage, w io.Writer, sel ExportOptions) (Summary, error) {
	var sum Summary
	ns := registry.NormalizeNamespace(sel.Namespace)
	if !registry.ValidNamespace(ns) {
		return sum, fmt.Errorf("%q is not a namespace; use lowercase letters, digits, - or _, such as @acme", sel.Namespace)
	}
	if ns == registry.PresetNamespace {
		return exportPresets(ctx, st, w, sel)
	}
	want := map[string]bool{}
	for _, r := range sel.Registries {
		p := strings.TrimPrefix(strings.Trim(r, "/"), ns+"/")
		if !registry.ValidPath(p) {
			return sum, fmt.Errorf("--registry %q is not a registry path such as runtimes/node", r)
		}
		want[p] = true
	}
	keys, err := st.List(ctx, layout.NamespaceDir(ns))
	if err != nil {
		return sum, fmt.Errorf("listing %s: %w", ns, err)
	}
	type version struct {
		path, version string
		hasIndex      bool
		files         []string // stored package files
	}
	versions := map[string]*version{} // by version folder
	var lists []string
	var order []string
	for _, k := range keys {
		c := layout.Classify(k)
		if c.Namespace != ns || (len(want) > 0 && !want[c.Path]) {
			continue
		}
		switch c.Kind {
		case layout.KindVersions:
			lists = append(lists, k)
			continue
		case layout.KindManifest, layout.KindDigestIndex, layout.KindFile:
		default:
			continue
		}
		dir := layout.VersionDir(ns, c.Path, c.Version)
		v := versions[dir]
		if v == nil {
			v = &version{path: c.Path, version: c.Version}
			versions[dir] = v
		}
		switch c.Kind {
		case layout.KindManifest:
			order = append(order, dir)
		case layout.KindDigestIndex:
			v.hasIndex = true
		case layout.KindFile:
			if !layout.Reserved(c.File) {
				v.files = append(v.files, c.File)
			}
		}
	}
	for p := range want {
		found := false
		for _, d := range order {
			found = found || versions[d].path == p
		}
		if !found {
			return sum, fmt.Errorf("%s/%s has no published version", ns, p)
		}
	}
	// entries maps each bundle entry to where its bytes come from.
	entries := map[string]bundleSource{}
	exported := map[string]bool{} // registry paths with a version exported
	for _, dir := range order {
		v := versions[dir]
		if !sel.Since.IsZero() {
			info, err := st.Stat(ctx, layout.Manifest(ns, v.path, v.version))
			if err != nil {
				return sum, fmt.Errorf("reading %s/%s@%s: %w", ns, v.path, v.version, err)
			}
			if info.ModTime.Before(sel.Since) {
				continue
			}
		}
		id := ns + "/" + v.path + "@" + v.version
		sk := layout.Signatures(ns, v.path, v.version)
		hasSigs, signed, err := storedSigned(ctx, st, sk)
		if err != nil {
			return sum, err
		}
		if sel.SignedOnly && !signed {
			sum.Refused = append(sum.Refused, Refusal{Version: id, Reason: "it has no signature (--signed-only)"})
			continue
		}
		var idx *registry.DigestIndex
		ik := layout.DigestIndex(ns, v.path, v.version)
		if v.hasIndex {
			data, err := readStored(ctx, st, ik)
			if err != nil {
				return sum, err
			}
			if idx, err = registry.ParseDigestIndex(data); err != nil {
				return sum, fmt.Errorf("%s: %w", ik, err)
			}
			entries[ik] = bundleSource{key: ik}
		} else {
			if idx, err = computeIndex(ctx, st, ns, v.path, v.version, v.files); err != nil {
				return sum, err
			}
			data, err := idx.Marshal()
			if err != nil {
				return sum, err
			}
			entries[ik] = bundleSource{data: data}
		}
		entries[layout.Manifest(ns, v.path, v.version)] = bundleSource{key: layout.Manifest(ns, v.path, v.version)}
		if hasSigs {
			entries[sk] = bundleSource{key: sk}
		}
		for f := range idx.Files {
			k := layout.File(ns, v.path, v.version, f)
			entries[k] = bundleSource{key: k}
		}
		sum.Versions = append(sum.Versions, id)
		exported[v.path] = true
	}
	if err := addLogProofs(ctx, st, ns, sum.Versions, entries); err != nil {
		return sum, err
	}
	for _, k := range lists {
		if exported[layout.Classify(k).Path] {
			entries[k] = bundleSource{key: k}
		}
	}
	if len(sum.Versions) == 0 && !sel.Since.IsZero() {
		return sum, fmt.Errorf("%s has no version published on or after %s to export", ns, sel.Since.Format(time.RFC3339))
	}
	if len(sum.Versions) == 0 && len(sum.Refused) > 0 {
		return sum, fmt.Errorf("%s has no signed version to export (%d left out unsigned); export without --signed-only", ns, len(sum.Refused))
	}
	if len(sum.Versions) == 0 {
		return sum, fmt.Errorf("%s has no published version to export", ns)
	}
	return sum, writeBundle(ctx, st, w, ns, entries, &sum)
}

// addLogProofs adds to entries the log proof of each version of ids (all
// of namespace ns) that ns's transparency log holds, against the log's
// current checkpoint, so that an air-gapped importer verifies them with
// the log's key. A namespace without a log adds none. A logged version
// whose stored digest index is not the one logged is an error: the
// storage was changed after logging.
func addLogProofs(ctx context.Context, st storage.Storage, ns string, ids []string, entries map[string]bundleSource) error {
	var vids []translog.VersionID
	for _, id := range ids {
		v, err := translog.ParseVersionID(id)
		if err != nil {
			return err
		}
		vids = append(vids, v)
	}
	_, proven, err := publish.LogLookupBatch(ctx, st, ns, 0, vids)
	if errors.Is(err, publish.ErrNotLogged) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("proving the versions of %s in its transparency log: %w", ns, err)
	}
	for _, v := range vids {
		bv, ok := proven[v.String()]
		if !ok {
			continue // stored before the log began
		}
		rec, err := translog.ParseRecord([]byte(bv.Record))
		if err != nil {
			return err
		}
		ik := layout.DigestIndex(ns, v.Path, v.Version)
		src := entries[ik]
		data := src.data
		if src.key != "" {
			if data, err = readStored(ctx, st, src.key); err != nil {
				return err
			}
		}
		if d := registry.Digest(data); d != rec.IndexDigest {
			return fmt.Errorf("%s: its stored digest index (%s) is not the one its transparency log recorded (%s): the storage was changed after the version was published; nothing was exported", v, d, rec.IndexDigest)
		}
		entries[layout.LogProof(ns, v.Path, v.Version)] = bundleSource{data: []byte(bv.Proof)}
	}
	return nil
}

// bundleSource is where the bytes of a bundle entry come from: a storage
// key, or bytes made by the export (a computed digest index).
type bundleSource struct {
	key  string
	data []byte
}

// writeBundle writes entries to w as a bundle of namespace ns, counting
// them in sum.
func writeBundle(ctx context.Context, st storage.Storage, w io.Writer, ns string, entries map[string]bundleSource, sum *Summary) error {
	bw := bundle.NewWriter(w, ns)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		src := entries[name]
		if src.key == "" {
			if err := bw.Add(name, int64(len(src.data)), bytes.NewReader(src.data)); err != nil {
				return err
			}
			sum.Bytes += int64(len(src.data))
			sum.Entries++
			continue
		}
		rc, info, err := st.Get(ctx, src.key)
		if err != nil {
			return fmt.Errorf("reading %s: %w", src.key, err)
		}
		var r io.Reader = rc
		size := info.Size
		if size < 0 {
			data, err := io.ReadAll(rc)
			if err != nil {
				rc.Close()
				return fmt.Errorf("reading %s: %w", src.key, err)
			}
			r, size = bytes.NewReader(data), int64(len(data))
		}
		err = bw.Add(name, size, r)
		rc.Close()
		if err != nil {
			return err
		}
		sum.Bytes += size
		sum.Entries++
	}
	return bw.Close()
}

// storedSigned reports whether the signatures document at key is stored
// (a version published without a signature has none), and whether it
// holds a signature.
func storedSigned(ctx context.Context, st storage.Storage, key string) (stored, signed bool, err error) {
	data, err := readStored(ctx, st, key)
	if errors.Is(err, storage.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	var doc wire.Signatures
	if err := json.Unmarshal(data, &doc); err != nil {
		return true, false, fmt.Errorf("%s: %w", key, err)
	}
	return true, len(doc.Signatures) > 0, nil
}

// digestReader returns "sha256:<hex>" of what r holds.
func digestReader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return registry.DigestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// readStored reads a small document of the storage.
func readStored(ctx context.Context, st storage.Storage, key string) ([]byte, error) {
	rc, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxStoredDocument+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(data) > maxStoredDocument {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", key, maxStoredDocument)
	}
	return data, nil
}

// computeIndex builds the digest index of a version stored without one
// from its stored manifest and files.
func computeIndex(ctx context.Context, st storage.Storage, ns, path, version string, files []string) (*registry.DigestIndex, error) {
	man, err := readStored(ctx, st, layout.Manifest(ns, path, version))
	if err != nil {
		return nil, err
	}
	x := &registry.DigestIndex{Namespace: ns, Path: path, Version: version, Manifest: registry.Digest(man), Files: map[string]string{}}
	for _, f := range files {
		rc, _, err := st.Get(ctx, layout.File(ns, path, version, f))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", layout.File(ns, path, version, f), err)
		}
		d, err := digestReader(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", layout.File(ns, path, version, f), err)
		}
		x.Files[f] = d
	}
	return x, nil
}

// ImportOptions configures [Import].
type ImportOptions struct {
	// Signers are the namespaces that require signed versions
	// ([registryserver.LoadSigners]); nil requires signatures nowhere. A version of such
	// a namespace is imported only with a signature by a key its file
	// allows, as an upload would be.
	Signers *registryserver.Signers
	// ClaimTTL is the publish claim's TTL (see [WithPublishClaimTTL]); 0
	// means the default.
	ClaimTTL time.Duration
	// Logger logs rollbacks; nil logs nothing.
	Logger *zap.Logger
	// Now is the clock signer files are judged by; nil is time.Now.
	Now func() time.Time
	// SkipRefused imports the versions the signing policy (Signers)
	// accepts and skips the others, listing each in
	// [Summary.Refused] with the reason. False refuses the whole
	// bundle when one version is refused. Either way a version is
	// imported whole or not at all; any other problem refuses the bundle.
	SkipRefused bool
	// Audit, when not nil, is the state database whose audit log records
	// the import, done by the operator ("bundle.import"): one event per
	// version or preset imported (with who signed it), one per version
	// the signing policy refused, and one for a bundle refused whole.
	// Versions already stored are not recorded: nothing was written. A
	// failure to record is logged; it does not undo or fail the import.
	Audit state.Store
	// LogKey, when not empty, is the server's log key (a note signer
	// key, the content of its LOG_KEY file): every version imported,
	// and every version of the bundle already stored but not yet
	// logged, is appended to its namespace's transparency log before it
	// is listed, as a publish is. Empty logs nothing.
	LogKey string
	// LogVerifier, when not empty, is the verifier line of the exporting
	// server's log key ("<name>+<hash>+<key>", what its GET /log/key
	// serves): every version of the bundle must carry a log proof that
	// verifies with it, naming the version's digest index, or nothing
	// is imported. Empty does not check the bundle's proofs.
	LogVerifier string
}

func (o ImportOptions) now() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

func (o ImportOptions) logger() *zap.Logger {
	if o.Logger == nil {
		return zap.NewNop()
	}
	return o.Logger
}

// ImportError lists every reason [Import] refused a bundle; nothing
// was written.
type ImportError struct {
	Problems []string
	// Refused counts the problems that are versions the signing policy
	// refused: [ImportOptions.SkipRefused] would skip them.
	Refused int
}

func (e *ImportError) Error() string {
	const shown = 20
	p := e.Problems
	more := ""
	if len(p) > shown {
		more = fmt.Sprintf("\n  … and %d more", len(p)-shown)
		p = p[:shown]
	}
	return "the bundle was not imported, nothing was written:\n  " + strings.Join(p, "\n  ") + more
}

// Import stores the versions of b (read and checked by
// [bundle.Read]) in st. It first checks everything, and writes nothing if
// anything is wrong ([*ImportError]): each version's storage keys must fit
// the limits every backend shares, its signatures must verify (and satisfy
// opt.Signers where the namespace requires signed versions), and a version
// already stored must have the same digest index, or it is a conflict.
// With opt.SkipRefused, the versions the signing policy refuses are
// skipped instead, each listed in [Summary.Refused]. Versions
// already stored with the same digests are skipped. Before the first
// version is written into a namespace that holds nothing yet, the
// namespace is marked as filled from elsewhere ([layout.UpstreamMarker]),
// so that it may later be served from an upstream. Each other version is
// then published as an upload is (claim, files, digest index, signatures,
// registry.json, versions.json), so each appears whole or not at all, and
// replicas serving st see it at once. A bundle of presets (namespace
// "@presets") is checked preset by preset as POST /presets checks one, and
// each is published as it publishes one. An error while writing
// (ctx ended, the storage failed) leaves the versions imported so far,
// each complete; the summary names them.
func Import(ctx context.Context, st storage.Storage, b *bundle.Bundle, opt ImportOptions) (Summary, error) {
	var sum Summary
	var err error
	if b.Namespace == registry.PresetNamespace {
		sum, err = importPresets(ctx, st, b, opt)
	} else {
		sum, err = importVersions(ctx, st, b, opt)
	}
	if opt.Audit != nil {
		auditImport(ctx, opt, b, sum, err)
	}
	return sum, err
}

// auditImport records in opt.Audit what an import of b did (sum) and how
// it ended (err).
func auditImport(ctx context.Context, opt ImportOptions, b *bundle.Bundle, sum Summary, err error) {
	at := opt.now()()
	event := func(id, outcome, detail string) state.Event {
		ns, target, _ := strings.Cut(id, "/")
		return state.Event{At: at, Actor: core.ActorOperator, Action: core.ActionImport, Namespace: ns, Target: target,
			Outcome: outcome, Detail: detail}
	}
	signers := map[string][]string{}
	for _, v := range b.Versions {
		signers[v.ID()] = publish.Signers(v.Signatures)
	}
	var events []state.Event
	for _, id := range sum.Versions {
		detail := "from a bundle of " + b.Namespace
		if s := signers[id]; len(s) > 0 {
			detail += "; signed by " + strings.Join(s, ", ")
		}
		events = append(events, event(id, core.OutcomeOK, detail))
	}
	for _, r := range sum.Refused {
		events = append(events, event(r.Version, string(wire.CodeSignatureInvalid), r.Reason))
	}
	if ie, ok := errors.AsType[*ImportError](err); ok {
		events = append(events, state.Event{At: at, Actor: core.ActorOperator, Action: core.ActionImport, Namespace: b.Namespace,
			Target: "bundle", Outcome: "refused", Detail: fmt.Sprintf("%d problems, nothing was written; the first: %s", len(ie.Problems), ie.Problems[0])})
	} else if err != nil {
		events = append(events, state.Event{At: at, Actor: core.ActorOperator, Action: core.ActionImport, Namespace: b.Namespace,
			Target: "bundle", Outcome: "failed", Detail: fmt.Sprintf("stopped after %d imported: %s", len(sum.Versions), redact.Text(err.Error(), nil))})
	}
	if len(events) == 0 {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if aerr := opt.Audit.Audit(actx, events...); aerr != nil {
		opt.logger().Warn("recording the import in the audit log failed", zap.Int("events", len(events)), zap.Error(aerr))
	}
}

// importVersions is [Import] of a bundle of registry versions.
func importVersions(ctx context.Context, st storage.Storage, b *bundle.Bundle, opt ImportOptions) (Summary, error) {
	var sum Summary
	now, log := opt.now(), opt.logger()
	var problems []string
	refused := 0
	fresh := storage.Fresh(st)
	var todo, stored []*bundle.Version
	var verifier note.Verifier
	if opt.LogVerifier != "" {
		var err error
		if verifier, err = note.NewVerifier(strings.TrimSpace(opt.LogVerifier)); err != nil {
			return sum, fmt.Errorf("the log verifier %q is not a note verifier key (\"<name>+<hash>+<key>\", what GET /log/key of the exporting server shows)", opt.LogVerifier)
		}
	}
	for _, v := range b.Versions {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		pv := publishVersion(v)
		if err := pv.CheckKeys(v.Files); err != nil {
			problems = append(problems, v.ID()+": "+err.Error())
			continue
		}
		if err := checkBundleSignatures(v, nil, now()); err != nil {
			problems = append(problems, v.ID()+": "+err.Error())
			continue
		}
		if opt.Signers.For(v.Namespace) != nil {
			if err := checkBundleSignatures(v, opt.Signers, now()); err != nil {
				if opt.SkipRefused {
					sum.Refused = append(sum.Refused, Refusal{Version: v.ID(), Reason: err.Error()})
				} else {
					problems = append(problems, v.ID()+": "+err.Error())
					refused++
				}
				continue
			}
		}
		if verifier != nil {
			if err := checkLogProof(v, verifier); err != nil {
				problems = append(problems, v.ID()+": "+err.Error())
				continue
			}
		}
		same, err := storedSame(ctx, fresh, v)
		switch {
		case err != nil:
			problems = append(problems, v.ID()+": "+err.Error())
		case same == nil:
			todo = append(todo, v)
		case *same:
			stored = append(stored, v)
		default:
			problems = append(problems, v.ID()+" is already stored with other content (its digest index differs): versions are immutable; remove it from the bundle (export with --registry or --since) or from this storage")
		}
	}
	if len(problems) > 0 {
		return Summary{}, &ImportError{Problems: problems, Refused: refused}
	}
	if len(todo) > 0 {
		// A namespace filled by imports may later be served from an
		// upstream, as one filled by a mirror may; one that holds
		// registries published here stays bound to this server.
		if _, err := publish.MarkUpstream(ctx, fresh, b.Namespace, map[string]string{"bundle": b.Namespace}); err != nil {
			return sum, fmt.Errorf("marking %s as filled from a bundle: %w", b.Namespace, err)
		}
	}
	popts := []publish.Option{publish.WithLogger(log), publish.WithClaimTTL(opt.ClaimTTL), publish.WithClock(now)}
	if opt.LogKey != "" {
		signer, _, err := publish.NewLogSigner(opt.LogKey)
		if err != nil {
			return sum, err
		}
		popts = append(popts, publish.WithLog(signer))
	}
	store := publish.New(st, popts...)
	// Versions already stored are listed in versions.json if they are
	// not yet (publish repairs the list of an existing version and
	// returns ErrVersionExists).
	for _, v := range stored {
		_ = store.Publish(ctx, publishVersion(v), func(publish.PutFunc) error { return nil })
		sum.Skipped = append(sum.Skipped, v.ID())
	}
	ttl := opt.ClaimTTL
	if ttl <= 0 {
		ttl = publish.DefaultClaimTTL
	}
	for _, v := range todo {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		skipped, err := importVersion(ctx, store, fresh, b, v, ttl)
		if err != nil {
			return sum, err
		}
		if skipped {
			sum.Skipped = append(sum.Skipped, v.ID())
		} else {
			sum.Versions = append(sum.Versions, v.ID())
		}
	}
	return sum, nil
}

// claimPoll is how often an import waiting for another publisher of the
// same version checks whether it committed.
const claimPoll = 100 * time.Millisecond

// importVersion publishes v, or reports it skipped when another publisher
// (another import, a replica) stored it with the same digests meanwhile.
// While another publisher holds the version's claim it waits, at most
// twice the claim TTL (a publisher that died has lost its claim by then).
func importVersion(ctx context.Context, store *publish.Store, fresh storage.Storage, b *bundle.Bundle, v *bundle.Version, ttl time.Duration) (skipped bool, err error) {
	deadline := time.Now().Add(2 * ttl)
	for {
		err := store.Publish(ctx, publishVersion(v), func(put publish.PutFunc) error {
			for _, f := range v.Files {
				r, size, err := b.Open(v, f)
				if err != nil {
					return err
				}
				if err := put(ctx, f, size, r); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, publish.ErrVersionExists) {
			if err != nil {
				return false, fmt.Errorf("importing %s: %w", v.ID(), err)
			}
			return false, nil
		}
		same, serr := storedSame(ctx, fresh, v)
		switch {
		case serr != nil:
			return false, fmt.Errorf("importing %s: %w", v.ID(), serr)
		case same != nil && *same:
			return true, nil
		case same != nil:
			return false, fmt.Errorf("%s was published with other content while the bundle was imported; the versions imported before it stay", v.ID())
		case time.Now().After(deadline):
			return false, fmt.Errorf("%s is being published by another process that has not finished after %v; import the bundle again later", v.ID(), 2*ttl)
		}
		// Claimed by a publisher that has not committed yet.
		t := time.NewTimer(claimPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// checkLogProof verifies v's log proof with the exporting server's log
// verifier: the checkpoint is signed by it, the record is in the tree and
// names v and its digest index.
func checkLogProof(v *bundle.Version, verifier note.Verifier) error {
	if v.LogProof == nil {
		return errors.New("it carries no transparency-log proof (export it from a server that keeps a log, after the version was logged), and --log-verifier requires one")
	}
	p, err := translog.ParseProof(v.LogProof)
	if err != nil {
		return err
	}
	rec, _, err := p.Verify(verifier, translog.Origin(verifier.Name(), v.Namespace))
	if err != nil {
		return fmt.Errorf("its transparency-log proof does not verify: %w", err)
	}
	if rec.ID() != v.ID() || rec.IndexDigest != registry.Digest(v.IndexBytes) {
		return fmt.Errorf("its transparency-log proof is of %s with digest index %s, not of this version (%s)", rec.ID(), rec.IndexDigest, registry.Digest(v.IndexBytes))
	}
	return nil
}

// publishVersion is the publish of v.
func publishVersion(v *bundle.Version) publish.Version {
	pv := publish.Version{Namespace: v.Namespace, Segments: strings.Split(v.Path, "/"), Version: v.Version, Manifest: v.Manifest, Index: v.Index}
	if v.Signatures != nil {
		pv.Signatures = v.Signatures
	}
	return pv
}

// checkBundleSignatures verifies the signatures of v as an upload's
// would be (every one valid over the digest index, one by an allowed key
// where the namespace requires signed versions).
func checkBundleSignatures(v *bundle.Version, signers *registryserver.Signers, now time.Time) error {
	allowed := signers.For(v.Namespace)
	var fields [][]byte
	if v.ParsedSignatures != nil {
		for _, s := range v.ParsedSignatures.Signatures {
			fields = append(fields, []byte(s.Signature))
		}
	}
	if len(fields) == 0 {
		if allowed != nil {
			return fmt.Errorf("namespace %s requires signed versions (SIGNERS_DIR), and this version has no signature", v.Namespace)
		}
		return nil
	}
	if _, err := publish.CheckSignatures(v.Index, fields, allowed, now); err != nil {
		if se, ok := errors.AsType[*publish.SignatureError](err); ok {
			return errors.New(se.Error())
		}
		return err
	}
	return nil
}

// storedSame reports whether v is stored: nil when it is not, else
// whether its stored digest index equals v's.
func storedSame(ctx context.Context, st storage.Storage, v *bundle.Version) (*bool, error) {
	_, err := st.Stat(ctx, layout.Manifest(v.Namespace, v.Path, v.Version))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var stored *registry.DigestIndex
	data, err := readStored(ctx, st, layout.DigestIndex(v.Namespace, v.Path, v.Version))
	if errors.Is(err, storage.ErrNotFound) {
		var files []string
		keys, lerr := st.List(ctx, layout.VersionDir(v.Namespace, v.Path, v.Version))
		if lerr != nil {
			return nil, lerr
		}
		for _, k := range keys {
			if c := layout.Classify(k); c.Kind == layout.KindFile && !layout.Reserved(c.File) {
				files = append(files, c.File)
			}
		}
		if stored, err = computeIndex(ctx, st, v.Namespace, v.Path, v.Version, files); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	} else if stored, err = registry.ParseDigestIndex(data); err != nil {
		return nil, fmt.Errorf("the stored digest index: %w", err)
	}
	a, err := stored.Marshal()
	if err != nil {
		return nil, err
	}
	bb, err := v.Index.Marshal()
	if err != nil {
		return nil, err
	}
	same := bytes.Equal(a, bb)
	return &same, nil
}
