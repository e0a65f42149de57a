package cli

import (
	"fmt"
	"io"
	"strings"
)

// Exit codes of [Main]. [exitCodes] describes them for people (jig help
// exit-codes); docs/commands.md's table repeats it.
const (
	ExitOK    = 0
	ExitError = 1
	// ExitUsage is a command line jig cannot run (an unknown flag, a
	// missing argument, contradictory flags), for the commands the
	// reference (rk) does not have; see [referenceCommands].
	ExitUsage = 2
	// ExitNotClean is a command that ran and found the project "not
	// clean": jig check's drift, jig outdated --exit-code's outdated
	// registries, the conflicts jig update left, jig verify's failures,
	// the repositories jig fleet update skipped for conflicts. A finding,
	// not a failure to look.
	ExitNotClean = 3
	ExitAborted  = 130
	// ExitTerminated is set by internal/shutdown.Run, not by Main.
	ExitTerminated = 143
)

// exitCode is one row of the exit-code table.
type exitCode struct {
	Code    int
	Meaning string
}

// exitCodes is the one table of jig's exit codes, printed by jig help
// exit-codes.
var exitCodes = []exitCode{
	{ExitOK, "success"},
	{ExitError, "an error: the command could not do what was asked (a server, network, file or project problem)"},
	{ExitUsage, "a usage error: an unknown command or flag, a missing argument or contradictory flags (see the rule below)"},
	{ExitNotClean, "the answer is \"not clean\": jig check found drift, jig outdated --exit-code found outdated registries, jig update left conflicts, jig verify found a failure, jig fleet update and jig fleet apply skipped repositories for conflicts or a stale plan, jig publish --dry-run found that the version does not cover its semver impact, jig registry test found a failing check"},
	{ExitAborted, "aborted: Ctrl-C (SIGINT), or a prompt cancelled"},
	{ExitTerminated, "stopped by SIGTERM"},
}

// referenceCommands are the commands the reference (rk) has. rk exits 1 on
// any error, usage errors included, and jig keeps that for them (and for a
// command line that names no command), so scripts written for rk read the
// same codes. The new codes (2, 3) apply where rk had none.
var referenceCommands = []string{"init", "add", "list", "config", "doctor", "version"}

// exitCodesRule is the rule above, for people.
var exitCodesRule = "The reference (rk) exits 1 on any error. jig keeps that for the commands rk has (" +
	strings.Join(referenceCommands, ", ") + ") and for a command line that names no command: " +
	"their usage errors exit 1 too. Codes 2 and 3 apply where rk had none: the other commands."

// printExitCodes writes the exit-code table and its rule (jig help
// exit-codes).
func printExitCodes(w io.Writer) {
	fmt.Fprintln(w, "Exit codes of jig:")
	fmt.Fprintln(w)
	for _, c := range exitCodes {
		meaning := strings.ReplaceAll(wrap(c.Meaning, 70), "\n", "\n       ")
		fmt.Fprintf(w, "  %-3d  %s\n", c.Code, meaning)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, wrap(exitCodesRule, 78))
}

// wrap breaks s into lines of at most width characters at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		if i > 0 {
			if n+1+len(word) > width {
				b.WriteByte('\n')
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
