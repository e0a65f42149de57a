package servercli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/logx"
	"github.com/jigkit/jig/internal/termtext"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/storage"
)

// AuditSettings are the server's audit log settings.
type AuditSettings struct {
	AuditMaxAge time.Duration `name:"audit-max-age" env:"AUDIT_MAX_AGE" default:"9600h" help:"How long the audit log (GET /audit, jig-server audit) keeps an event; older ones are removed every hour (default 9600h, 400 days)."`
}

// validateAudit checks the audit log settings.
func (c *AuditSettings) validateAudit() error {
	if c.AuditMaxAge <= 0 {
		return fmt.Errorf("--audit-max-age/AUDIT_MAX_AGE %v must be positive, such as 9600h (400 days)", c.AuditMaxAge)
	}
	return nil
}

// auditOptions are the handler options of the settings.
func (c *AuditSettings) auditOptions() []registryserver.Option {
	return []registryserver.Option{registryserver.WithAuditMaxAge(c.AuditMaxAge)}
}

// auditCmd is "jig-server audit".
type auditCmd struct {
	URL        string        `default:"http://127.0.0.1:${port}" help:"Base URL of the running jig-server to ask (default: this machine on PORT)."`
	AdminToken string        `name:"admin-token" env:"ADMIN_TOKEN" help:"The server's admin token; prefer the environment variable (or .env, as the server reads it) to the flag."`
	Since      string        `placeholder:"TIME" help:"Only events at or after TIME: RFC 3339 (2026-12-01T10:00:00Z), a date (2026-12-01), or a span back from now (24h, 7d)."`
	Until      string        `placeholder:"TIME" help:"Only events before TIME, in the forms --since takes."`
	Actor      string        `help:"Only events of this actor, exactly as shown: admin, operator, anonymous, token:<id>, or a token's mark and id (\"CI (token:0123456789ab)\")."`
	Namespace  string        `placeholder:"NS" help:"Only events of this namespace (the @ is optional)."`
	Action     string        `help:"Only events of this action (publish, auth.failed, config.reload); ending in \".\", every action it starts (admin.)."`
	Limit      int           `default:"100" help:"The most events shown, newest first (0: every event that matches)."`
	JSON       bool          `name:"json" help:"Print one JSON document: {\"events\": [...]}, newest first, with \"next\" when --limit left some out."`
	Timeout    time.Duration `default:"30s" help:"How long each request to the server may take."`
}

// Help is shown by "jig-server audit --help".
func (c *auditCmd) Help() string {
	return `Reads the audit log of a running jig-server through its GET /audit route, with the admin
token (ADMIN_TOKEN from the environment or .env, as the server reads it): every publish
(refused ones too), mirror fetch, census report, failed token check, index rebuild and
configuration reload, newest first. The read itself is recorded.

Examples:
  jig-server audit --since 24h
  jig-server audit --action auth.failed --since 7d
  jig-server audit --namespace @team --action publish --json
  jig-server audit --url https://registry.example.com --limit 0 --json > audit.json`
}

// Validate checks the flags before the server is asked.
func (c *auditCmd) Validate() error {
	if c.AdminToken == "" {
		return errors.New("the audit log needs the server's admin token: set ADMIN_TOKEN (as in the server's environment or .env) or pass --admin-token")
	}
	if c.Limit < 0 {
		return fmt.Errorf("--limit %d is negative; use 0 for every event or a number such as 100", c.Limit)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("--timeout %v must be positive, such as 30s", c.Timeout)
	}
	_, err := c.filter(time.Now())
	return err
}

// filter is the query the flags ask for, times read against now.
func (c *auditCmd) filter(now time.Time) (wire.AuditFilter, error) {
	f := wire.AuditFilter{Actor: c.Actor, Namespace: registry.NormalizeNamespace(c.Namespace), Action: c.Action}
	var err error
	if c.Since != "" {
		if f.Since, err = wire.ParseAuditTime(c.Since, now); err != nil {
			return f, fmt.Errorf("--since: %w", err)
		}
	}
	if c.Until != "" {
		if f.Until, err = wire.ParseAuditTime(c.Until, now); err != nil {
			return f, fmt.Errorf("--until: %w", err)
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, fmt.Errorf("--since %s is not before --until %s", c.Since, c.Until)
	}
	return f, nil
}

// Run reads the events, page by page, and prints them.
func (c *auditCmd) Run(ctx context.Context, stdout io.Writer, stderr stderrWriter) error {
	f, err := c.filter(time.Now())
	if err != nil {
		return err
	}
	cl, err := registryclient.New(c.URL, registryclient.WithToken(c.AdminToken), registryclient.WithTimeout(c.Timeout),
		registryclient.WithUserAgent("jig-server/"+buildinfo.Get().Version))
	if err != nil {
		return fmt.Errorf("--url %q: %w", c.URL, err)
	}
	log, err := readAudit(ctx, cl, f, c.Limit)
	if err != nil {
		return fmt.Errorf("reading the audit log of %s: %w", c.URL, err)
	}
	if c.JSON {
		return printJSON(stdout, log)
	}
	printAudit(stdout, log)
	if log.Next != "" {
		fmt.Fprintf(stderr, "%s shown, newest first; older ones match too: raise --limit or narrow the filters.\n",
			english.Count(len(log.Events), "event", "events"))
	}
	return nil
}

// readAudit reads up to limit events (0: all) that f selects, following
// the pages; Next is set when more remain.
func readAudit(ctx context.Context, cl *registryclient.Client, f wire.AuditFilter, limit int) (*wire.AuditLog, error) {
	all := &wire.AuditLog{Events: []wire.AuditEvent{}}
	for {
		f.Limit = wire.MaxAuditPage
		if limit > 0 {
			f.Limit = min(limit-len(all.Events), wire.MaxAuditPage)
		}
		page, err := cl.Audit(ctx, f)
		if err != nil {
			return nil, err
		}
		all.Events = append(all.Events, page.Events...)
		all.Next = page.Next
		if page.Next == "" || page.Next == f.Cursor || limit > 0 && len(all.Events) >= limit {
			return all, nil
		}
		f.Cursor = page.Next
	}
}

// printAudit prints log as a table: time, actor, action, namespace,
// target, outcome. What events hold came from requests: every field is
// escaped for the terminal.
func printAudit(w io.Writer, log *wire.AuditLog) {
	if len(log.Events) == 0 {
		fmt.Fprintln(w, "No audit log events match.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tACTOR\tACTION\tNAMESPACE\tTARGET\tOUTCOME")
	cell := func(s string) string {
		if s == "" {
			return "-"
		}
		return termtext.Escape(s)
	}
	for _, e := range log.Events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.At.UTC().Format(time.RFC3339), cell(e.Actor), cell(e.Action),
			cell(e.Namespace), cell(e.Target), cell(e.Outcome))
	}
	_ = tw.Flush()
}

// toolState opens the server's state database for a command run beside
// the server (index rebuild, mirror import), so that what it writes is
// in the server's audit log; the caller closes it. Settings that name
// none (S3 storage without STATE_DIR or DATABASE_URL), or a database that
// does not open, give nil, said on w: the command runs unrecorded.
func toolState(ctx context.Context, s *StateSettings, ss *StorageSettings, st storage.Storage, w io.Writer) state.Store {
	err := s.validateState(ss)
	var db state.Store
	if err == nil {
		db, err = openState(ctx, s, st)
	}
	if err != nil {
		fmt.Fprintf(w, "Warning: not recorded in the server's audit log: %v\n", err)
		return nil
	}
	return db
}

// toolLogger logs a helper command's problems of level and above (a
// failure to record in the audit log) to w, one pretty line each.
func toolLogger(w io.Writer, level string) *zap.Logger {
	log, err := logx.New(logx.Config{Level: level, Format: "pretty", Out: w})
	if err != nil {
		return zap.NewNop()
	}
	return log
}
