package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/jigkit/jig/registryclient"
)

// printError writes err for people: HTTP errors as "Error: <status>" and a
// line naming the registry, network errors with the URL and a hint to run
// jig doctor, anything else as "Error: <err>".
func printError(w io.Writer, o *Output, err error) {
	errorWord := o.paintErr(ansiRed, "Error:")
	var rl *registryclient.RateLimitError
	var se *registryclient.StatusError
	var ne *registryclient.NetworkError
	var nc *registryclient.NotConfiguredError
	var env *registryclient.EnvNotSetError
	var nu *registryclient.MissingURLError
	switch {
	case errors.As(err, &rl):
		fmt.Fprintf(w, "%s 429 Too Many Requests\n", errorWord)
		what := describe(rl.Err)
		if rl.RetryAfter > 0 {
			fmt.Fprintf(w, "Rate limited while fetching %s; try again in %s.\n", what, rl.RetryAfter)
		} else {
			fmt.Fprintf(w, "Rate limited while fetching %s; try again later.\n", what)
		}
	case errors.As(err, &se):
		fmt.Fprintf(w, "%s %d %s\n", errorWord, se.StatusCode, http.StatusText(se.StatusCode))
		what := describe(se)
		detail := ""
		if se.Message != "" {
			detail = ": " + se.Message
		}
		switch se.StatusCode {
		case http.StatusUnauthorized:
			fmt.Fprintf(w, "Failed to fetch %s%s\n", what, detail)
			if ns := namespaceOf(se.Registry); ns != "" {
				fmt.Fprintf(w, "Set a valid token with 'jig config set %s --token <token>'.\n", ns)
			}
		case http.StatusForbidden:
			fmt.Fprintf(w, "Access denied to %s%s\n", what, detail)
		case http.StatusNotFound:
			fmt.Fprintf(w, "Not found: %s%s\n", what, detail)
		default:
			fmt.Fprintf(w, "Failed to fetch %s%s\n", what, detail)
		}
		if se.StatusCode >= 500 {
			fmt.Fprintln(w, "Run 'jig doctor' to check the registry's health.")
		}
	case errors.As(err, &ne):
		fmt.Fprintf(w, "%s could not reach %s: %v\n", errorWord, ne.URL, ne.Err)
		fmt.Fprintln(w, "Run 'jig doctor' to check your registry configuration and connectivity.")
	case errors.As(err, &nc):
		fmt.Fprintf(w, "%s %v. Run 'jig config set %s --url <url>' first.\n", errorWord, err, nc.Namespace)
	case errors.As(err, &env):
		fmt.Fprintf(w, "%s %v\n", errorWord, err)
		fmt.Fprintf(w, "Export %s, or store the value with '%s'.\n", env.Var, configSetCommand(env.Namespace, env.Field))
	case errors.As(err, &nu):
		fmt.Fprintf(w, "%s %v\n", errorWord, err)
		fmt.Fprintf(w, "Set it with '%s'.\n", configSetCommand(nu.Namespace, "url"))
	default:
		fmt.Fprintf(w, "%s %v\n", errorWord, err)
	}
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
