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
	default:
		fmt.Fprintf(w, "%s %v\n", errorWord, err)
	}
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
	printError(&b, newOutput(&b, &b, false, false), err)
	return strings.TrimRight(b.String(), "\n")
}
