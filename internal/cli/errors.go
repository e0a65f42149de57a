package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// errorReport is what jig says about a failed command: for people
// ([printError]: the headline, the detail line and the hint, each on its
// own line) and for --json ([printErrorJSON]: {"error": {code, message,
// hint}} on stdout).
type errorReport struct {
	// Code is the server's error code for HTTP errors (UNAUTHORIZED,
	// NOT_FOUND, …), NETWORK_ERROR, RATE_LIMIT_EXCEEDED, or ERROR.
	Code string `json:"code"`
	// Message says what went wrong, on one line.
	Message string `json:"message"`
	// Hint is a complete command or step that fixes it, when there is one.
	Hint string `json:"hint,omitempty"`
	// Status is the HTTP status of a failed request, 0 otherwise.
	Status int `json:"status,omitempty"`

	headline  string // after "Error: " in text output
	detail    string // a second line in text output, "" for none
	plain     bool   // text output is Message alone, without "Error: "
	hintShown bool   // the headline already ends with the hint
}

// Codes of errors that did not come from a server's error body.
const (
	codeNetwork       = "NETWORK_ERROR"
	codeTimeout       = "TIMEOUT"
	codeAborted       = "ABORTED"
	codeUsage         = "USAGE"
	codeNotConfigured = "NOT_CONFIGURED"
	codeGeneric       = "ERROR"
	// codeSignature: a version the trust policy refuses (unsigned,
	// untrusted or a signature that does not verify).
	codeSignature = "SIGNATURE_REFUSED"
	// codeRollback: a server's answer that goes back on a version seen
	// signed before.
	codeRollback = "ROLLBACK_REFUSED"
)

// reportFor describes err. HTTP errors name the status and the registry,
// network errors the URL, with a hint to run jig doctor; timeout is the
// command's deadline (for the message when it passed); aborted says the
// user cancelled.
func reportFor(err error, timeout time.Duration, aborted bool) errorReport {
	r := reportOf(err, timeout, aborted)
	if re := (*reportedError)(nil); errors.As(err, &re) {
		return r
	}
	if h := shorthandHint(err); h != "" && !aborted {
		r.Hint, r.hintShown = h, false
		var se *registryclient.StatusError
		if errors.As(err, &se) && se.StatusCode != http.StatusNotFound {
			// The server will not show @main to a caller without a token:
			// jig-server answers 401 for a namespace its auth.json does
			// not declare (so that gated and absent look alike), the
			// reference 403. For shorthand read as @main that is, as far
			// as the user can tell, a registry that is not there.
			r.Code, r.Status = string(wire.CodeNotFound), wire.CodeNotFound.Status()
			r.headline = fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
			r.detail = fmt.Sprintf("Not found: %s (the server answered %d %s)", describe(se), se.StatusCode, se.Code)
			if withoutToken(err) {
				r.detail = fmt.Sprintf("Not found: %s (the server answered %d %s to a request without a token)", describe(se), se.StatusCode, se.Code)
				r.Hint += fmt.Sprintf(" If %s does need a token, run '%s'.", registry.DefaultNamespace, configSetCommand(registry.DefaultNamespace, "token"))
			}
			r.Message = r.detail
		}
	}
	return r
}

// shorthandHint explains a registry named in shorthand that jig read as
// @main and that the server does not have (or will not show): the server
// probably stores it in another namespace, as a storage written for the
// reference does (@rack). It returns "" for other errors.
func shorthandHint(err error) string {
	var sh *apply.ShorthandError
	if !errors.As(err, &sh) || sh.ID.Namespace != registry.DefaultNamespace ||
		!(errors.Is(err, registryclient.ErrNotFound) || errors.Is(err, registryclient.ErrForbidden) || withoutToken(err)) {
		return ""
	}
	whose := "The identifier " + sh.Written
	switch sh.From {
	case registry.PresetNamespace:
		whose = "The preset member " + sh.Written
	case registry.DefaultNamespace:
	default:
		whose = "The dependency " + sh.Written + " of a registry in " + sh.From
	}
	return fmt.Sprintf("%s is shorthand, which jig reads as %s. If the server keeps it in another namespace "+
		"(a storage written for the reference uses @rack), start jig-server with --default-namespace <namespace> "+
		"(e.g. --default-namespace rack), or run 'jig config set %s --default-namespace <namespace>'.",
		whose, sh.ID.Key(), sh.From)
}

// withoutToken reports whether err is a 401 that says a token is
// required: the request carried none.
func withoutToken(err error) bool {
	var se *registryclient.StatusError
	return errors.As(err, &se) && se.Code == wire.CodeUnauthorized && se.StatusCode == wire.CodeUnauthorized.Status()
}

// reportedError is an error whose report its command made itself, with
// knowledge [reportOf] lacks (publish: which token a refused upload
// needs). It is printed like any other, as text and with --json.
type reportedError struct {
	err error
	r   errorReport
}

func (e *reportedError) Error() string { return e.r.Message }
func (e *reportedError) Unwrap() error { return e.err }

// reportOf is [reportFor] without the hints that depend on how a
// registry was named.
func reportOf(err error, timeout time.Duration, aborted bool) errorReport {
	if aborted {
		return errorReport{Code: codeAborted, Message: "Operation cancelled", plain: true}
	}
	if re := (*reportedError)(nil); errors.As(err, &re) {
		return re.r
	}
	err = withAdvice(err)
	if errors.Is(err, registryclient.ErrDeadline) {
		r := errorReport{Code: codeTimeout, headline: fmt.Sprintf("gave up after %s: %v", timeout, err),
			Hint: "The registry server is too slow or stalled. Allow more time with --timeout (e.g. --timeout 10m) or JIG_TIMEOUT, or run 'jig doctor'."}
		r.Message = r.headline
		return r
	}
	if errors.Is(err, apply.ErrDeadline) {
		r := errorReport{Code: codeTimeout, headline: fmt.Sprintf("gave up after %s: %v", timeout, err),
			Hint: "The files to merge are very large. Allow more time with --timeout (e.g. --timeout 10m) or JIG_TIMEOUT."}
		r.Message = r.headline
		return r
	}
	var rl *registryclient.RateLimitError
	var se *registryclient.StatusError
	var ne *registryclient.NetworkError
	var nc *registryclient.NotConfiguredError
	var env *rcfile.EnvNotSetError
	var nu *registryclient.MissingURLError
	var uns *registryclient.NotSupportedError
	var pna *apply.PresetNotAddableError
	var ni *apply.NotInstalledError
	var ur *apply.UnresolvedError
	var np *apply.NoProjectError
	var ov *apply.OtherVersionError
	var nr *apply.NotRecordedError
	var li *apply.LogIndexError
	var we *translog.WitnessError
	var nw *registryclient.NotWitnessedError
	var ncd *registryclient.NotCachedError
	var sig *registryclient.SignatureError
	var rb *registryclient.RollbackError
	switch {
	case errors.As(err, &sig):
		r := hinted(err, signatureHint(sig))
		r.Code = codeSignature
		return r
	case errors.As(err, &rb):
		r := hinted(err, rollbackHint(rb))
		r.Code = codeRollback
		return r
	case errors.As(err, &rl):
		st := wire.CodeRateLimitExceeded.Status()
		r := errorReport{Code: string(wire.CodeRateLimitExceeded), Status: st, headline: fmt.Sprintf("%d %s", st, http.StatusText(st))}
		what := describe(rl.Err)
		if rl.RetryAfter > 0 {
			r.detail = fmt.Sprintf("Rate limited while fetching %s; try again in %s.", what, rl.RetryAfter)
		} else {
			r.detail = fmt.Sprintf("Rate limited while fetching %s; try again later.", what)
		}
		r.Message = r.detail
		return r
	case errors.As(err, &se):
		r := errorReport{Code: string(se.Code), Status: se.StatusCode,
			headline: fmt.Sprintf("%d %s", se.StatusCode, http.StatusText(se.StatusCode))}
		if r.Code == "" {
			r.Code = strings.ToUpper(strings.ReplaceAll(http.StatusText(se.StatusCode), " ", "_"))
		}
		what := describe(se)
		detail := ""
		if se.Message != "" {
			detail = ": " + se.Message
		}
		switch se.StatusCode {
		case http.StatusUnauthorized:
			r.detail = fmt.Sprintf("Failed to fetch %s%s", what, detail)
			if ns := namespaceOf(se.Registry); ns != "" {
				r.Hint = fmt.Sprintf("Set a valid token with 'jig config set %s --token <token>'.", ns)
			}
		case http.StatusForbidden:
			r.detail = fmt.Sprintf("Access denied to %s%s", what, detail)
		case http.StatusNotFound:
			r.detail = fmt.Sprintf("Not found: %s%s", what, detail)
		default:
			r.detail = fmt.Sprintf("Failed to fetch %s%s", what, detail)
		}
		if se.StatusCode >= 500 {
			r.Hint = "Run 'jig doctor' to check the registry's health."
		}
		r.Message = r.detail
		return r
	case errors.As(err, &ne):
		r := errorReport{Code: codeNetwork, headline: fmt.Sprintf("could not reach %s: %v", ne.URL, ne.Err),
			Hint: "Run 'jig doctor' to check your registry configuration and connectivity."}
		r.Message = r.headline
		return r
	case errors.As(err, &nc):
		hint := fmt.Sprintf("Run '%s' first.", configSetCommand(nc.Namespace, "url"))
		if nc.DefaultsAsked && !rcfile.IsBuiltin(nc.Namespace) {
			// The namespace may be another server's default (a storage
			// written for the reference keeps its registries in @rack).
			hint = fmt.Sprintf("Run '%s' first, or, if %s is the default namespace of your registry server, "+
				"start jig-server with --default-namespace %s or run 'jig config set %s --default-namespace %s'.",
				configSetCommand(nc.Namespace, "url"), nc.Namespace, strings.TrimPrefix(nc.Namespace, "@"), registry.PresetNamespace, nc.Namespace)
		}
		return errorReport{Code: codeNotConfigured, Message: err.Error(), Hint: hint,
			headline: err.Error() + ". " + hint, hintShown: true}
	case errors.As(err, &env):
		return errorReport{Code: codeNotConfigured, Message: err.Error(), headline: err.Error(),
			Hint: fmt.Sprintf("Export %s, or store the value with '%s'.", env.Var, configSetCommand(env.Namespace, env.Field))}
	case errors.As(err, &nu):
		return errorReport{Code: codeNotConfigured, Message: err.Error(), headline: err.Error(),
			Hint: fmt.Sprintf("Set it with '%s'.", configSetCommand(nu.Namespace, "url"))}
	case errors.As(err, &uns) && uns.Route == "/presets":
		return hinted(err, fmt.Sprintf("fetch one by name with '%s'", suggest.InitCommand(registry.PresetNamespace+"/<name>")))
	case errors.As(err, &pna):
		return hinted(err, fmt.Sprintf("use '%s' or add its registries one by one", suggest.InitCommand(pna.Preset)))
	case errors.As(err, &ni):
		switch {
		case ni.Suggestion != "":
			return hinted(err, fmt.Sprintf("did you mean %s?", ni.Suggestion))
		case ni.Mode == apply.ModeRemove:
			return hinted(err, "jig.json lists the installed registries ('jig outdated' shows them)")
		}
		return hinted(err, fmt.Sprintf("add it with '%s'", suggest.AddCommand(ni.Typed)))
	case errors.As(err, &ur):
		return hinted(err, "resolve them (edit out the <<<<<<< markers; 'jig check' lists the files), then run the command again")
	case errors.As(err, &np) && np.Reference:
		return hinted(err, fmt.Sprintf("the reference (rk) made this project (%s); run 'jig adopt' to write %s from it", registry.ReferenceProjectFile, registry.ProjectFile))
	case errors.As(err, &np):
		return hinted(err, "run 'jig init' or 'jig add' first")
	case errors.As(err, &ncd) && !ncd.Unpublished:
		return hinted(err, "run the command once without --offline")
	case errors.As(err, &nr):
		return hinted(err, "run without --frozen to update the project")
	case errors.As(err, &nw):
		return hinted(err, fmt.Sprintf("each witness runs 'jig log witness cosign %s' (from a scheduled job); the versions of the tree head they cosigned last install meanwhile", nw.Namespace))
	case errors.As(err, &we):
		return hinted(err, fmt.Sprintf("try again once the witnesses have cosigned it (each runs 'jig log witness cosign %s'); to change which witnesses, or how many, are required: 'jig trust log add %s <log verifier> --witness <verifier key> … --min-witnesses <k>'", we.Namespace(), we.Namespace()))
	case errors.Is(err, registryclient.ErrNoLogKey):
		return hinted(err, "trust the log key its server's operator publishes first: jig trust log add <@namespace> <verifier line>")
	case errors.As(err, &li) && li.Got < 0:
		return hinted(err, fmt.Sprintf("trust the log key the project was installed with again ('jig trust log add %s <verifier line>'), or run without --frozen", li.Namespace))
	case errors.As(err, &li):
		return hinted(err, "report this to the server's operator; run without --frozen only once the difference is explained")
	case errors.As(err, &ov):
		return hinted(err, fmt.Sprintf("run 'jig update %s --to %s' to move it (your edits are merged, not overwritten)", ov.Key, ov.Requested))
	default:
		return errorReport{Code: codeGeneric, Message: err.Error(), headline: err.Error()}
	}
}

// advisedError is an error whose text jig completes with advice: the
// library says what is wrong and carries what a program needs to act
// (a namespace, a key, a bundle), jig says which command to run.
type advisedError struct {
	error
	text string
}

func (e *advisedError) Error() string { return e.text }
func (e *advisedError) Unwrap() error { return e.error }

// withAdvice returns err with the text jig shows for it: the text of
// every error in err's tree that [advice] knows is replaced by its
// advised text, in place, so wrapping prefixes and suffixes stay. Errors
// still match what err matched. An err without such errors is returned
// as it is.
func withAdvice(err error) error {
	text, changed := err.Error(), false
	var walk func(e error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if a, ok := advice(e); ok {
			in := e.Error()
			if i := strings.LastIndex(text, in); i >= 0 {
				text, changed = text[:i]+a+text[i+len(in):], true
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	if !changed {
		return err
	}
	return &advisedError{err, text}
}

// advice is the text jig shows for a library error that leaves the
// command to run to its caller: the error's own text with that command
// added. ok is false for other errors.
func advice(err error) (text string, ok bool) {
	switch e := err.(type) {
	case *rcfile.TrustError:
		switch e.Reason {
		case rcfile.TrustNotConfigured:
			return fmt.Sprintf("%s; add it first with '%s', then trust its keys", e, configSetCommand(e.Namespace, "url")), true
		case rcfile.TrustKeyTaken:
			return fmt.Sprintf("%s; remove it first with 'jig trust remove %s --key %s'", e, e.Namespace, e.Fingerprint), true
		case rcfile.TrustNoPolicy:
			return fmt.Sprintf("%s (see 'jig trust list')", e), true
		}
	case *registryclient.TrustConfigError:
		switch e.Reason {
		case registryclient.TrustKeyTwice:
			return fmt.Sprintf("%s; remove one with 'jig trust remove %s --key %s'", e, e.Namespace, e.Fingerprint), true
		case registryclient.TrustSignersUnreadable:
			return fmt.Sprintf("%s; fix the path with 'jig trust add %s --allowed-signers <file>'", e, e.Namespace), true
		}
	case *registryclient.CachedOtherError:
		return fmt.Sprintf("%s; run 'jig cache clean' if the bundle is right", e), true
	case *signing.AgentError:
		return fmt.Sprintf("%s, or sign elsewhere with `ssh-keygen -Y sign -n %s -f %s <digest index>` ('jig publish --print-digests' prints it) and pass the signature with --signature", e, signing.Namespace, e.Path), true
	case *apply.AdoptError:
		switch e.Reason {
		case apply.AdoptNoReferenceFile:
			return fmt.Sprintf("%s; jig adopt carries over a project the reference (rk) made", e), true
		case apply.AdoptHasProjectFile:
			return fmt.Sprintf("%s; jig adopt only writes one for a project that has none", e), true
		case apply.AdoptDependencyNotListed:
			return fmt.Sprintf("%s; add it with 'rk add %s', then run 'jig adopt' again", e, e.Dependency), true
		}
	case *apply.NoConflictError:
		switch e.Reason {
		case apply.NoConflictSidesGone:
			return fmt.Sprintf("%s, then run 'jig check'", e), true
		case apply.NoConflictNoUpdate:
			return fmt.Sprintf("%s; 'jig update --to <version>' moves back", e), true
		}
	case *apply.JournalError:
		if len(e.Changed) > 0 {
			c := *e
			c.Hint = "copy your changes away and run 'jig update --abort' again, or keep the update and settle its conflicts with 'jig resolve <file> --ours|--theirs'"
			return c.Error(), true
		}
	case *registryclient.ImportedError:
		switch {
		case e.Err != nil:
			return fmt.Sprintf("%s (run with --offline to use it without asking the server, or 'jig cache clean' to drop it)", e), true
		case e.Unpublished:
			return fmt.Sprintf("%s in the cache came from the bundle %s, and %s does not confirm that version: it serves no digest index for it (removed, never published there, a server without digest indexes, or a namespace that needs a token: jig login %s); nothing was used from the bundle. Run 'jig cache clean' to drop the bundle's content, or run with --offline to use it as it is",
				e.Version, e.Bundle, e.Server, namespaceOf(e.Version)), true
		}
		return fmt.Sprintf("%s. Run 'jig cache clean' to drop it (the server's content is fetched again)", e), true
	}
	return "", false
}

// signatureHint says what to do about a version the trust policy
// refuses.
func signatureHint(e *registryclient.SignatureError) string {
	if e.Bad {
		return "the version's files or digests changed after it was signed; do not install it, and tell the registry's owners. 'jig verify' checks an existing project"
	}
	return fmt.Sprintf("ask the publisher to sign it ('jig publish --sign-key'), or, if the key is one you trust, run 'jig trust add %s --key \"<public key>\" --principal <name>'", e.Namespace)
}

// rollbackHint says what to do about a refused rollback when the change
// was intended.
func rollbackHint(e *registryclient.RollbackError) string {
	what := e.Registry
	if e.Before != "" {
		what += "@" + e.Version
	}
	return fmt.Sprintf("if the registry's owners did this on purpose, run 'jig trust forget %s' and try again", what)
}

// hinted reports err with a hint that completes its line: "<err>; <hint>"
// for people, the hint in its own field for --json.
func hinted(err error, hint string) errorReport {
	return errorReport{Code: codeGeneric, Message: err.Error(), Hint: hint, headline: err.Error() + "; " + hint, hintShown: true}
}

// planWarnings adds to p's warnings what the plan reports in typed
// fields, worded with the command that acts on it: one line per file
// whose custom merge script was skipped, naming --allow-scripts, and one
// per registry kept although nothing needs it any more, naming jig remove.
func planWarnings(p *apply.Plan) {
	for _, s := range p.SkippedScripts {
		p.Warnings = append(p.Warnings, fmt.Sprintf("skipped %s: %s uses a custom merge script; re-run with --allow-scripts to run it with node", s.Target, s.Registry))
	}
	for _, key := range p.Unneeded {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s is no longer needed by any installed registry; it was kept (remove it with 'jig remove %s')", key, key))
	}
}

// printError writes r for people: "Error: <headline>", then the detail
// and the hint lines when there are any.
func printError(w io.Writer, o *Output, r errorReport) {
	// Error texts quote servers and manifests: escaped, keeping the lines
	// jig composed.
	if r.plain {
		fmt.Fprintln(w, escapeLines(r.Message))
		return
	}
	if r.headline == "" {
		r.headline = r.Message
	}
	fmt.Fprintf(w, "%s %s\n", o.paintErr(ansiRed, "Error:"), escapeLines(r.headline))
	if r.detail != "" {
		fmt.Fprintln(w, escapeLines(r.detail))
	}
	if r.Hint != "" && !r.hintShown {
		fmt.Fprintln(w, escapeLines(r.Hint))
	}
}

// printErrorJSON writes r as the --json error document on w.
func printErrorJSON(w io.Writer, r errorReport) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Error errorReport `json:"error"`
	}{r})
}

// configSetCommand returns the complete jig config set command that stores
// field ("url", "token" or "header <Name>") of namespace ns.
func configSetCommand(ns, field string) string {
	switch {
	case field == "url":
		return "jig config set " + ns + " --url <url>"
	case field == "token":
		return "jig config set " + ns + " --token <token>"
	case strings.HasPrefix(field, "header "):
		return "jig config set " + ns + " --header \"" + strings.TrimPrefix(field, "header ") + ": <value>\""
	}
	return "jig config set " + ns + " --url <url>"
}

// describe names what a failed request concerned, with its URL.
func describe(se *registryclient.StatusError) string {
	switch {
	case se.Registry != "" && se.URL != "":
		return fmt.Sprintf("registry %s (%s)", se.Registry, se.URL)
	case se.Registry != "":
		return "registry " + se.Registry
	default:
		return se.URL
	}
}

// namespaceOf returns the "@ns" a registry label starts with.
func namespaceOf(label string) string {
	if !strings.HasPrefix(label, "@") {
		return ""
	}
	if i := strings.IndexAny(label, "/ "); i > 0 {
		return label[:i]
	}
	return label
}

// ErrorText is the message [printError] prints for err, without colour and
// without the trailing newline: the one home of error messages and hints,
// also used by jig mcp's tool errors.
func ErrorText(err error) string {
	var b strings.Builder
	printError(&b, newOutput(&b, &b, false, false), reportFor(err, 0, false))
	return strings.TrimRight(b.String(), "\n")
}

// explainNotFound improves the report of a registry the user typed (jig
// add, jig info) that the server does not have. When the namespace it was
// read in lists a registry whose name is near, or another namespace of
// that server holds the same path, the report says "did you mean …?". The
// default-namespace hint of shorthand stays only when that setting could
// be the cause: the server has a namespace the rc file does not configure.
// Any other error, and a failure to ask, leave err as it is.
func explainNotFound(ctx context.Context, app *App, typed string, err error) error {
	if !errors.Is(err, registryclient.ErrNotFound) {
		return err
	}
	src, serr := app.Sources()
	cfg, cerr := app.Config()
	if serr != nil || cerr != nil {
		return err
	}
	id, perr := src.ParseID(ctx, typed)
	if perr != nil {
		return err
	}
	cl, lerr := src.Client(id.Namespace)
	if lerr != nil {
		return err
	}
	listed, lerr := cl.Registries(ctx, id.Namespace)
	if errors.Is(lerr, registryclient.ErrNotFound) {
		listed, lerr = nil, nil // the server has no such namespace
	}
	if lerr != nil || slices.Contains(listed, id.Path) {
		// the typed registry exists: what is missing is something else
		return err
	}
	keys := make([]string, 0, len(listed))
	for _, p := range listed {
		keys = append(keys, id.Namespace+"/"+p)
	}
	could := false
	if registry.IsShorthand(typed) {
		nss, _ := cl.Namespaces(ctx)
		asked := 0
		for _, ns := range nss {
			if _, configured := cfg.Get(ns); configured || ns == id.Namespace || ns == registry.PresetNamespace {
				continue
			}
			could = true
			if asked++; asked > 4 {
				break
			}
			if other, err := cl.Registries(ctx, ns); err == nil && slices.Contains(other, id.Path) {
				keys = append(keys, ns+"/"+id.Path)
			}
		}
	}
	sug := suggest.Registry(id.Key(), keys)
	r := reportFor(err, app.timeout, false)
	if !could {
		r = reportOf(err, app.timeout, false)
	}
	if sug != "" {
		mean := fmt.Sprintf("Did you mean %s?", sug)
		if r.Hint != "" && could {
			r.Hint = mean + " " + r.Hint
		} else {
			r.Hint = mean
		}
		r.hintShown = false
	}
	return &reportedError{err: err, r: r}
}
