package servercli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/bundleio"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
)

// mirrorCmd is "jig-server mirror": bundles for the air gap.
type mirrorCmd struct {
	Export mirrorExportCmd `cmd:"" help:"Write the published versions of a namespace to a bundle file."`
	Import mirrorImportCmd `cmd:"" help:"Check a bundle file, then publish its versions into the storage."`
}

// mirrorExportCmd is "jig-server mirror export".
type mirrorExportCmd struct {
	StorageSettings `embed:""`

	Namespace  string    `required:"" help:"Namespace to export, e.g. @acme (the @ is optional)."`
	Registry   []string  `name:"registry" placeholder:"PATH" help:"Export only this registry path, e.g. runtimes/node (repeatable). Default: every registry of the namespace."`
	Since      string    `placeholder:"DATE" help:"Export only versions published on or after DATE (2026-01-31 or an RFC 3339 time)."`
	Output     string    `short:"o" required:"" placeholder:"FILE" help:"Bundle file to write (written to a temporary file, renamed into place when complete)."`
	SignedOnly bool      `name:"signed-only" help:"Leave out the versions stored without a signature (each is listed on stderr), for a server whose SIGNERS_DIR requires signed versions."`
	JSON       bool      `name:"json" help:"Print one JSON document: the versions exported and those left out."`
	since      time.Time `kong:"-"`
}

// Help is shown by "jig-server mirror export --help".
func (c *mirrorExportCmd) Help() string {
	return `Reads the storage the server uses (the same STORAGE_*/S3_* settings and .env) and writes
every published version of the namespace with its files, digest index, signatures and
version lists, plus a manifest with the sha-256 of every entry. The same content always
gives the same bytes. Carry the file across the air gap and run 'jig-server mirror import'
(or 'jig cache import') there.

--namespace @presets exports the presets (jig init -t @presets/<name>), with --registry
naming presets. A bundle holds registries or presets, so an air-gapped site takes two:
one of its namespace, one of @presets.

Examples:
  jig-server mirror export --namespace @acme -o acme.tar
  jig-server mirror export --namespace @acme --registry runtimes/node --since 2026-01-01 -o node.tar
  jig-server mirror export --namespace @acme --signed-only -o acme-signed.tar
  jig-server mirror export --namespace @presets -o presets.tar`
}

// Validate checks the flags before anything is opened.
func (c *mirrorExportCmd) Validate() error {
	if c.Since != "" {
		var err error
		if c.since, err = parseSince(c.Since); err != nil {
			return err
		}
	}
	return c.validateStorage()
}

func parseSince(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is not a date; use 2026-01-31 or an RFC 3339 time such as 2026-01-31T12:00:00Z", s)
}

// openMirrorStorage opens the storage without the read cache: a mirror
// command reads each key once and must see what is stored now.
func openMirrorStorage(ctx context.Context, s StorageSettings) (storage.Storage, func() error, error) {
	return openStorage(ctx, &s, storageCache{}, prometheus.NewRegistry())
}

// Run writes the bundle to a temporary file beside --output and renames it
// into place, so an interrupted export leaves no file behind.
func (c *mirrorExportCmd) Run(ctx context.Context, stdout io.Writer, stderr stderrWriter) (err error) {
	if c.backend() == "disk" {
		// Opening a disk storage creates its folder; a mistyped one is
		// an error here, not an empty export.
		if _, err := os.Stat(c.StorageRoot); err != nil {
			return fmt.Errorf("--storage-root/STORAGE_ROOT: %w; point it at the server's storage folder", err)
		}
	}
	st, closeStorage, err := openMirrorStorage(ctx, c.StorageSettings)
	if err != nil {
		return err
	}
	defer closeStorage()
	var sum bundleio.Summary
	err = bundle.WriteFile(c.Output, func(w io.Writer) error {
		var err error
		sum, err = bundleio.Export(ctx, st, w, bundleio.ExportOptions{
			Namespace: c.Namespace, Registries: c.Registry, Since: c.since, SignedOnly: c.SignedOnly,
		})
		return err
	})
	printRefused(stderr, "Left out", sum.Refused)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("export stopped; no bundle was written: %w", context.Cause(ctx))
		}
		return err
	}
	if c.JSON {
		return printJSON(stdout, map[string]any{"bundle": c.Output, "versions": nonNil(sum.Versions), "refused": nonNilRefused(sum.Refused), "entries": sum.Entries, "bytes": sum.Bytes})
	}
	fmt.Fprintf(stdout, "Exported %s (%d entries, %d bytes) to %s\n", english.Count(len(sum.Versions), "version", "versions"), sum.Entries, sum.Bytes, c.Output)
	for _, v := range sum.Versions {
		fmt.Fprintf(stdout, "  %s\n", v)
	}
	return nil
}

// mirrorImportCmd is "jig-server mirror import".
type mirrorImportCmd struct {
	StorageSettings `embed:""`
	StateSettings   `embed:""`

	SignersDir      string        `name:"signers-dir" env:"SIGNERS_DIR" placeholder:"DIR" help:"Folder of the server's allowed_signers files (as jig-server's --signers-dir): versions of a namespace listed there are imported only with a signature by an allowed key."`
	PublishClaimTTL time.Duration `name:"publish-claim-ttl" env:"PUBLISH_CLAIM_TTL" default:"30s" help:"As jig-server's --publish-claim-ttl: how long an import's claim of a version lives without a heartbeat."`
	LogKey          string        `name:"log-key" env:"LOG_KEY" placeholder:"FILE" help:"The server's transparency log key file (as jig-server's --log-key): every version imported is logged before it is listed."`
	LogVerifier     string        `name:"log-verifier" placeholder:"VERIFIER" help:"The exporting server's log verifier line (\"<name>+<hash>+<key>\", what its GET /log/key shows), or @FILE: every version of the bundle must carry a transparency-log proof that verifies with it, or nothing is imported."`
	SkipRefused     bool          `name:"skip-refused" help:"Import the versions SIGNERS_DIR accepts and skip the others (each listed with the reason on stderr), instead of refusing the whole bundle."`
	JSON            bool          `name:"json" help:"Print one JSON document: the versions imported, skipped as already stored, and refused."`

	Bundle string `arg:"" placeholder:"BUNDLE" help:"Bundle file written by 'jig-server mirror export'."`
}

// Help is shown by "jig-server mirror import --help".
func (c *mirrorImportCmd) Help() string {
	return `Checks the whole bundle first: every entry against the bundle's manifest, every file against
its version's digest index, the signatures (against SIGNERS_DIR where a namespace requires them),
and that no version is already stored with other content. On any problem nothing is written.
Then each version is published as an upload is, so it appears whole or not at all, even to
replicas serving the same storage. Versions already stored with the same digests are skipped,
so importing a bundle twice changes nothing.

Under a signing policy one unsigned version refuses the whole bundle; --skip-refused imports
the versions the policy accepts and lists the others with the reason (each version is
imported whole or not at all). A bundle of @presets is checked as POST /presets checks a
preset. An import into a namespace that holds nothing yet marks it (.upstreams/@ns.json) as
filled from elsewhere, so it may later be served from an upstream (UPSTREAMS_CONFIG_PATH).
With --log-verifier, the bundle's transparency-log proofs (mirror export adds one per logged
version) are verified offline against the exporting server's log key: a version without a
proof, or with one that does not verify or does not name its digest index, refuses the bundle.
Each version imported (or refused) is recorded in the server's audit log (DATABASE_URL or
STATE_DIR, as the server's; with S3 storage and neither, the import says it is unrecorded).

Examples:
  STORAGE_ROOT=/srv/jig jig-server mirror import acme.tar
  STORAGE_ROOT=/srv/jig SIGNERS_DIR=/etc/jig/signers jig-server mirror import --skip-refused acme.tar
  STORAGE_ROOT=/srv/jig jig-server mirror import --log-verifier @upstream-log.pub --log-key /etc/jig/log.key acme.tar`
}

// Validate checks the flags before anything is opened.
func (c *mirrorImportCmd) Validate() error {
	if c.PublishClaimTTL < time.Second {
		return fmt.Errorf("--publish-claim-ttl/PUBLISH_CLAIM_TTL %v is too short; use at least 1s, such as 30s", c.PublishClaimTTL)
	}
	return c.validateStorage()
}

// Run checks the bundle, then imports it, recording what it wrote in the
// server's audit log.
func (c *mirrorImportCmd) Run(ctx context.Context, stdout io.Writer, stderr stderrWriter) error {
	b, closeBundle, err := openBundle(c.Bundle)
	if err != nil {
		return err
	}
	defer closeBundle()
	var signers *registryserver.Signers
	if c.SignersDir != "" {
		if signers, err = registryserver.LoadSigners(c.SignersDir); err != nil {
			return fmt.Errorf("--signers-dir/SIGNERS_DIR: %w", err)
		}
	}
	st, closeStorage, err := openMirrorStorage(ctx, c.StorageSettings)
	if err != nil {
		return err
	}
	defer closeStorage()
	logKey, err := readLogKey(c.LogKey)
	if err != nil {
		return err
	}
	verifier, err := readVerifierArg(c.LogVerifier)
	if err != nil {
		return err
	}
	opt := bundleio.ImportOptions{Signers: signers, ClaimTTL: c.PublishClaimTTL, SkipRefused: c.SkipRefused, Logger: toolLogger(stderr, "warn"), LogKey: logKey, LogVerifier: verifier}
	if db := toolState(ctx, &c.StateSettings, &c.StorageSettings, st, stderr); db != nil {
		defer db.Close()
		opt.Audit = db
	}
	sum, err := bundleio.Import(ctx, st, b, opt)
	printRefused(stderr, "Skipped (refused by SIGNERS_DIR)", sum.Refused)
	if err != nil {
		if ie, ok := errors.AsType[*bundleio.ImportError](err); ok && ie.Refused > 0 {
			return fmt.Errorf("%w\n%s refused by SIGNERS_DIR; to import the rest, run 'jig-server mirror import --skip-refused %s'",
				err, english.Count(ie.Refused, "version is", "versions are"), c.Bundle)
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("import stopped: %w", context.Cause(ctx))
		}
		if len(sum.Versions) > 0 {
			err = fmt.Errorf("%w (imported before it stopped, each complete: %s)", err, strings.Join(sum.Versions, ", "))
		}
		return err
	}
	if c.JSON {
		return printJSON(stdout, map[string]any{"imported": nonNil(sum.Versions), "skipped": nonNil(sum.Skipped), "refused": nonNilRefused(sum.Refused)})
	}
	fmt.Fprintf(stdout, "Imported %s, skipped %s already stored with the same content\n", english.Count(len(sum.Versions), "version", "versions"), english.Count(len(sum.Skipped), "version", "versions"))
	for _, v := range sum.Versions {
		fmt.Fprintf(stdout, "  + %s\n", v)
	}
	for _, v := range sum.Skipped {
		fmt.Fprintf(stdout, "  = %s\n", v)
	}
	return nil
}

// openBundle opens and checks a bundle file ([bundle.OpenFile]).
func openBundle(path string) (*bundle.Bundle, func() error, error) {
	b, closeFile, err := bundle.OpenFile(path, bundle.Limits{})
	if errors.Is(err, bundle.ErrInvalid) {
		return nil, nil, fmt.Errorf("refusing the bundle %s, nothing was written: %w", path, err)
	}
	return b, closeFile, err
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// stderrWriter is the standard error of a tool command (its io.Writer
// is standard output).
type stderrWriter struct{ io.Writer }

// printRefused lists the versions an export left out or an import
// skipped, with the reason, on stderr.
func printRefused(w io.Writer, what string, refused []bundleio.Refusal) {
	if len(refused) == 0 {
		return
	}
	fmt.Fprintf(w, "%s %s:\n", what, english.Count(len(refused), "version", "versions"))
	for _, r := range refused {
		fmt.Fprintf(w, "  - %s: %s\n", r.Version, r.Reason)
	}
}

func nonNilRefused(r []bundleio.Refusal) []bundleio.Refusal {
	if r == nil {
		return []bundleio.Refusal{}
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
