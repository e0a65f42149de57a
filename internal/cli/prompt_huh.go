package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"charm.land/huh/v2"
	"github.com/charmbracelet/colorprofile"
	"golang.org/x/term"
)

// huhPrompter is the interactive [Prompter]; it is the only file that
// imports huh.
//
// huh v2 (bubbletea v2) is used rather than v1 because bubbletea v1 queries
// the terminal's background colour (OSC 11 and a cursor-position report) in
// a package init, in every jig process, prompt or not: on a terminal that
// does not answer, every command, "jig version" included, waited 5 s and
// printed ESC]11;?. v2 only talks to the terminal while a form runs.
//
// With plain set (NO_COLOR, TERM=dumb) the form runs in huh's accessible
// mode: plain lines on the terminal, no escape sequences and no queries.
type huhPrompter struct {
	in    io.Reader
	out   io.Writer
	plain bool
}

func newHuhPrompter(in io.Reader, out io.Writer, plain bool) Prompter {
	return huhPrompter{in: in, out: out, plain: plain}
}

func (p huhPrompter) run(ctx context.Context, f huh.Field) error {
	return p.runMode(ctx, f, p.plain)
}

// runMode runs the one-field form f, as plain lines when accessible is set.
func (p huhPrompter) runMode(ctx context.Context, f huh.Field, accessible bool) error {
	out := p.out
	if p.plain {
		// No styling at all: the accessible form still styles its titles.
		out = &colorprofile.Writer{Forward: p.out, Profile: colorprofile.NoTTY}
	}
	in, done := formInput(p.in)
	defer done()
	form := huh.NewForm(huh.NewGroup(f)).WithInput(in).WithOutput(out).WithShowHelp(false).
		WithAccessible(accessible).WithWidth(p.width())
	err := form.RunWithContext(ctx)
	if errors.Is(err, huh.ErrUserAborted) {
		return ErrAborted
	}
	return err
}

// width is the terminal's width, or 80 when it cannot be told (a width of
// 0 makes the text input panic).
func (p huhPrompter) width() int {
	if f, ok := p.out.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// Input shows a huh text input with def as its placeholder: typing
// replaces it, and an empty answer means def.
func (p huhPrompter) Input(ctx context.Context, title, def string) (string, error) {
	var v string
	err := p.run(ctx, huh.NewInput().Title(title).Placeholder(def).Value(&v))
	if err != nil {
		return "", err
	}
	if v == "" {
		v = def
	}
	return v, nil
}

// Secret shows a huh input that echoes nothing, not even a mask.
func (p huhPrompter) Secret(ctx context.Context, title string) (string, error) {
	var v string
	if err := p.run(ctx, huh.NewInput().Title(title).EchoMode(huh.EchoModeNone).Value(&v)); err != nil {
		return "", err
	}
	return v, nil
}

// Confirm shows a huh yes/no question.
func (p huhPrompter) Confirm(ctx context.Context, title string, def bool) (bool, error) {
	v := def
	if err := p.run(ctx, huh.NewConfirm().Title(title).Value(&v)); err != nil {
		return false, err
	}
	return v, nil
}

// Choose asks on one plain line (huh's accessible input, the terminal in
// its usual line mode) and accepts only one of the choices (its value or
// its label); anything else is said and asked again. A line, unlike a
// full-screen form, keeps an answer typed ahead: one question follows
// another quickly here (a file after a file), and a full-screen form can
// lose the keys typed in its first moments.
func (p huhPrompter) Choose(ctx context.Context, title string, choices []Choice) (string, error) {
	var v string
	in := huh.NewInput().Title(title).Value(&v).Validate(func(s string) error {
		if _, ok := chosen(s, choices); !ok {
			var names []string
			for _, c := range choices {
				names = append(names, c.Value)
			}
			return fmt.Errorf("answer %s", strings.Join(names, ", "))
		}
		return nil
	})
	if err := p.runMode(ctx, in, true); err != nil {
		return "", err
	}
	c, _ := chosen(v, choices)
	return c, nil
}

// Select shows a huh select: arrows move, / searches, enter picks.
func (p huhPrompter) Select(ctx context.Context, title string, options []Choice) (string, error) {
	var v string
	err := p.run(ctx, huh.NewSelect[string]().Title(title).Options(huhOptions(options)...).
		Height(min(len(options), 12)+2).Value(&v))
	return v, err
}

// MultiSelect shows a huh multi-select: arrows move, space ticks, /
// searches, enter confirms.
func (p huhPrompter) MultiSelect(ctx context.Context, title string, options []Choice) ([]string, error) {
	var v []string
	err := p.run(ctx, huh.NewMultiSelect[string]().Title(title).Options(huhOptions(options)...).
		Height(min(len(options), 12)+2).Value(&v))
	if err != nil {
		return nil, err
	}
	// In the options' order, whatever order they were ticked in.
	var out []string
	for _, o := range options {
		if slices.Contains(v, o.Value) {
			out = append(out, o.Value)
		}
	}
	return out, nil
}

func huhOptions(cs []Choice) []huh.Option[string] {
	out := make([]huh.Option[string], len(cs))
	for i, c := range cs {
		out[i] = huh.NewOption(c.Label, c.Value)
	}
	return out
}
