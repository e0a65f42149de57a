package registryserver

import (
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/webhook"
)

// The targets of the configuration reloads the audit log records.
const (
	reloadAuth      = "auth.json"
	reloadSigners   = "signers"
	reloadUpstreams = "upstreams.json"
	reloadWebhooks  = "webhooks.json"
)

// auditReload records a configuration reload of target in the audit log,
// done by the operator: err is nil when the new configuration is in
// force, detail says what it holds (counts and namespaces, never a
// token, a secret or a URL).
func (h *Handler) auditReload(target string, err error, detail string) {
	outcome := core.OutcomeOK
	if err != nil {
		outcome = "refused"
		detail = redact.Text(err.Error(), nil)
	}
	h.core.AuditOperator(state.Event{Action: core.ActionConfigReload, Target: target, Outcome: outcome, Detail: detail})
}

// authSummary describes auth configuration a for the audit log: its
// namespaces, token entries and rejected namespaces, counted.
func authSummary(a *AuthConfig) string {
	if a == nil {
		return "no auth file: every stored namespace is public"
	}
	public := 0
	for _, r := range a.namespaces {
		if r.public {
			public++
		}
	}
	return fmt.Sprintf("%d namespaces (%d public, %d gated), %d token entries, %d namespaces rejected",
		len(a.namespaces), public, len(a.namespaces)-public, len(a.entries), len(a.warnings))
}

// signersSummary describes the signer files of s for the audit log.
func signersSummary(s *Signers) string {
	files := s.Files()
	if len(files) == 0 {
		return "no signer files: no namespace requires signed versions"
	}
	nss := make([]string, len(files))
	for i, f := range files {
		nss[i] = f.Namespace
	}
	return fmt.Sprintf("%d signer files: %s", len(files), strings.Join(nss, ", "))
}

// upstreamsSummary describes upstreams file c for the audit log.
func upstreamsSummary(c *UpstreamConfig) string {
	return fmt.Sprintf("%d upstreams serving %s", len(c.Upstreams()), strings.Join(c.Namespaces(), ", "))
}

// webhooksSummary describes hooks for the audit log (never their URLs,
// which may carry credentials, nor their secrets).
func webhooksSummary(hooks []webhook.Hook) string {
	enabled := 0
	for _, w := range hooks {
		if w.Enabled {
			enabled++
		}
	}
	return fmt.Sprintf("%d webhooks, %d enabled", len(hooks), enabled)
}
