package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Output writes human text to stdout, messages and warnings to stderr, and
// --json documents to stdout. Colour and symbols are used only on a
// terminal and never when NO_COLOR is set. The format strings are the
// CLI's own; every argument goes through [Escape] (see [safeArgs]), so text
// from a manifest or a server cannot send control sequences to the
// terminal.
type Output struct {
	stdout, stderr io.Writer
	color          bool // stdout is a terminal and NO_COLOR is unset
	colorErr       bool // stderr is a terminal and NO_COLOR is unset
	// quiet (--quiet) drops progress and informational messages; set
	// before the command runs.
	quiet bool
}

func newOutput(stdout, stderr io.Writer, color, colorErr bool) *Output {
	return &Output{stdout: stdout, stderr: stderr, color: color, colorErr: colorErr}
}

const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

func (o *Output) paint(c, s string) string {
	if !o.color {
		return s
	}
	return c + s + ansiReset
}

// paintErr colours text written to stderr.
func (o *Output) paintErr(c, s string) string {
	if !o.colorErr {
		return s
	}
	return c + s + ansiReset
}

// Println writes one line of result text to stdout.
func (o *Output) Println(a ...any) { fmt.Fprintln(o.stdout, safeArgs(a)...) }

// Printf writes result text to stdout.
func (o *Output) Printf(format string, a ...any) { fmt.Fprintf(o.stdout, format, safeArgs(a)...) }

// Success writes a success line to stdout ("✓ " prefixed on a terminal).
func (o *Output) Success(format string, a ...any) {
	msg := fmt.Sprintf(format, safeArgs(a)...)
	if o.color {
		msg = o.paint(ansiGreen, "✓") + " " + msg
	}
	fmt.Fprintln(o.stdout, msg)
}

// Infof writes a progress or informational message to stderr.
// Nothing is written with --quiet.
func (o *Output) Infof(format string, a ...any) {
	if o.quiet {
		return
	}
	fmt.Fprintf(o.stderr, format+"\n", safeArgs(a)...)
}

// Warnf writes a warning to stderr.
func (o *Output) Warnf(format string, a ...any) {
	fmt.Fprintln(o.stderr, o.paintErr(ansiYellow, "Warning:")+" "+fmt.Sprintf(format, safeArgs(a)...))
}

// Errorln writes a line to stderr.
func (o *Output) Errorln(a ...any) { fmt.Fprintln(o.stderr, safeArgs(a)...) }

// Result prints a command's result: v as one JSON document with --json
// (asJSON), else whatever text prints.
func (o *Output) Result(asJSON bool, v any, text func()) error {
	if asJSON {
		return o.JSON(v)
	}
	text()
	return nil
}

// JSON writes v to stdout as one indented JSON document.
func (o *Output) JSON(v any) error {
	enc := json.NewEncoder(o.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Columns writes rows to stdout as left-aligned columns two spaces apart, each
// line after indent; the last column is not padded.
func (o *Output) Columns(indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(Escape(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(Escape(c))
				break
			}
			fmt.Fprintf(&b, "%-*s  ", widths[i], Escape(c))
		}
		o.Println(strings.TrimRight(b.String(), " "))
	}
}
