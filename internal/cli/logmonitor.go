package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// codeUnknownVersions is the error code of a log monitor run that found
// versions the publisher does not know.
const codeUnknownVersions = "UNKNOWN_VERSIONS"

// maxKnownFile bounds the --known file.
const maxKnownFile = 16 << 20

// LogCmd groups "jig log monitor" and "jig log witness".
type LogCmd struct {
	Monitor LogMonitorCmd `cmd:"" help:"List the versions of a namespace's transparency log signed by a key (or by none) since the last run; exit 3 when one is unknown."`
	Witness LogWitnessCmd `cmd:"" help:"Witness a namespace's transparency log: check it only ever grows, and cosign its checkpoints (C2SP tlog-cosignature)."`
}

// LogMonitorCmd is "jig log monitor @ns --key <public key> [--known FILE] [--json]".
type LogMonitorCmd struct {
	Namespace string `arg:"" help:"Namespace whose log to read, e.g. @company; its log key must be trusted (jig trust log add)."`
	Key       string `name:"key" required:"" placeholder:"PUBLIC-KEY" help:"The publisher's SSH signing public key, one line as in ~/.ssh/id_ed25519.pub, or @FILE to read it from a .pub file."`
	Known     string `name:"known" placeholder:"FILE" help:"File of the versions you published, one @ns/<path>@<version> a line (# comments): only versions not in it are unknown. Without it, every version new since the last run is unknown."`
	JSON      bool   `name:"json" help:"Print one JSON document: the log, the tree sizes read between, and each version with its index, signers, time and whether it is known."`
}

// Help is shown by "jig log monitor --help".
func (c *LogMonitorCmd) Help() string {
	return `Reads the records the namespace's transparency log gained since the last run for this server,
namespace and key (remembered in the cache folder, logs.json), from the log's tiles, and lists
the versions signed by --key or by no key: a publisher learns of a version published in its name
(with a stolen key, or unsigned) that it did not publish. The checkpoint must be signed by the
namespace's trusted log key and extend the one the last run saw; every record is checked
against it. The first run reads the whole log.

A version is unknown when --known is given and does not list it, or, without --known, when it is
new since the last run. Exit 3 when there are unknown versions (they are listed first), 0 when
there are none, 1 on error (nothing is remembered then). Each run that succeeds, exit 3 included,
moves the mark: a version is reported once.

Examples:
  jig log monitor @acme --key @~/.ssh/release.pub
  jig log monitor @acme --key @release.pub --known released.txt --json`
}

// Run reads the log and prints what it found.
func (c *LogMonitorCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	text, err := keyArg(c.Key)
	if err != nil {
		return err
	}
	pk, err := signing.ParsePublicKey([]byte(strings.TrimSpace(text)))
	if err != nil {
		return fmt.Errorf("--key is not an SSH public key (one line as in ~/.ssh/id_ed25519.pub, or @FILE): %w", err)
	}
	fp := signing.Fingerprint(pk)
	var known map[string]bool
	if c.Known != "" {
		b, err := safefile.ReadFile(c.Known, maxKnownFile)
		if err != nil {
			return fmt.Errorf("--known %s: %w", c.Known, err)
		}
		if known, err = registryclient.ParseKnownVersions(b); err != nil {
			return fmt.Errorf("--known %s: %w", c.Known, err)
		}
	}
	cl, err := app.Client(c.Namespace)
	if err != nil {
		return err
	}
	rep, err := cl.MonitorLog(ctx, c.Namespace, fp, func(v string) bool { return known[v] })
	if err != nil {
		return err
	}
	if err := app.Out.Result(c.JSON, rep, func() { printMonitor(app, rep) }); err != nil {
		return err
	}
	if rep.Unknown == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s of %s signed by %s or unsigned %s not known to you", english.Count(rep.Unknown, "version", "versions"), rep.Log, fp, english.Plural(rep.Unknown, "is", "are"))
	hint := "If you did not publish it, your signing key or the server may be compromised: tell the server's operator and rotate the key."
	if c.Known == "" {
		hint += " List the versions you publish in a file and pass it with --known to be told only of the others."
	}
	return notClean(errorReport{Code: codeUnknownVersions, Message: msg, headline: msg, Hint: hint})
}

// printMonitor prints a monitor report: unknown versions first.
func printMonitor(app *App, rep *registryclient.MonitorReport) {
	app.Out.Printf("%s from %s: records %d to %d read, %s signed by %s or unsigned\n", rep.Log, rep.Server, rep.From, rep.To, english.Count(len(rep.Versions), "version", "versions"), rep.Key)
	for _, known := range []bool{false, true} {
		for _, v := range rep.Versions {
			if v.Known != known {
				continue
			}
			mark := "UNKNOWN"
			if known {
				mark = "known  "
			}
			by := registryclient.Unsigned
			if len(v.Signers) > 0 {
				by = "signed"
			}
			app.Out.Printf("%s  %6d  %s  %s  %s\n", mark, v.Index, v.Time.Format(time.RFC3339), by, v.Version)
		}
	}
}

// Help is shown by "jig log --help".
func (c *LogCmd) Help() string {
	return `Examples:
  jig log monitor @acme --key @~/.ssh/release.pub                     # exit 3: a version you did not publish
  jig log monitor @acme --key @release.pub --known released.txt --json
  jig log witness keygen witness.example.com -o witness.key           # prints the witness's verifier key
  jig log witness cosign @acme --key witness.key                      # from a scheduled job`
}

// Help is shown by "jig log witness --help".
func (c *LogWitnessCmd) Help() string {
	return `A witness is run by someone other than the server's operator. Each run reads the namespace's
checkpoint (signed by the trusted log key), checks from the log's tiles that it extends the largest
tree head the witness cosigned before (its state file), and only then cosigns it (C2SP
tlog-cosignature, cosignature/v1) and POSTs the cosignature to the server, which must list the
witness's verifier key in LOG_WITNESSES. A checkpoint that does not extend it (a fork, a rollback)
is refused, naming both tree heads, exit 1, nothing cosigned. Clients that require k of n witnesses
(jig trust log add --witness … --min-witnesses k) then accept only checkpoints the witnesses saw.

Examples:
  jig log witness keygen witness.example.com -o /etc/jig/witness.key
  jig log witness cosign @acme --key /etc/jig/witness.key --state /var/lib/jig/witness.state`
}
