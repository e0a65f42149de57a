// Package redact is the one place where jig decides how a URL, or text
// that may hold URLs and credentials, is shown without its secrets: in an
// error, a log line, a trace, a census identity or a fleet report.
//
// A URL's user information is a credential. How much of it each form keeps
// is decided here, once:
//
//   - [URL] (log lines, messages about a configured URL) keeps the shape
//     of the URL: the password becomes [Mask], and so does a user name
//     given without a password, since "https://<token>@host" is a common
//     way to pass a token. A user name followed by a password is kept.
//   - [Parsed] (the client's traces and messages) drops the user
//     information whole.
//   - [Strip] (a repository address in fleet output) drops the user
//     information, the query and the fragment.
//   - [Identity] (a census report's project identity) is [Strip] except
//     that a URL whose scheme is not http or https keeps its user name
//     ("ssh://git@host/x" stays as it is): over ssh the user is an
//     account name such as "git", not a token, and it names the project.
//   - [Origin] (webhook URLs, whose path often is the secret) keeps only
//     the scheme and the host.
//
// The values of query parameters whose names may denote a secret
// ([SecretParam], one list matched case-insensitively) are hidden by
// [URL] and [Parsed]. [Text] shows free text with every URL in it
// stripped and known secrets ([Secrets]) blanked as whole words; [All]
// blanks a secret everywhere it occurs.
//
// Usage:
//
//	log.Info("request", zap.String("url", redact.URL(r.RequestURI)))
//	return fmt.Errorf("git clone: %s", redact.Text(out, redact.Secrets(repo)))
package redact
