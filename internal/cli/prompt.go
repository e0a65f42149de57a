package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoPrompt is returned by a [Prompter] that cannot ask (no terminal,
// --ci or CI set). Commands wrap it with the flag that supplies the value.
var ErrNoPrompt = errors.New("cannot prompt: not running interactively")

// ErrAborted is returned when the user aborts a prompt (Ctrl-C, Esc). Main
// prints "Operation cancelled" and exits 130.
var ErrAborted = errors.New("aborted")

// Prompter asks the user questions. Commands call it only through this
// interface; every prompt has a flag that supplies the value instead.
type Prompter interface {
	// Input asks for a line of text; def is the default answer.
	Input(ctx context.Context, title, def string) (string, error)
	// Confirm asks a yes/no question; def is the default answer.
	Confirm(ctx context.Context, title string, def bool) (bool, error)
	// Secret asks for a line the terminal never shows (a token).
	Secret(ctx context.Context, title string) (string, error)
	// Choose asks title and returns the Value of the choice answered: the
	// user types a choice's Value (one letter, "y") or its Label ("yes").
	Choose(ctx context.Context, title string, choices []Choice) (string, error)
	// Select offers options in a list the user can search (type / then
	// words) and returns the Value of the one picked.
	Select(ctx context.Context, title string, options []Choice) (string, error)
	// MultiSelect offers options to tick (space) and returns the Values
	// of those ticked, in the options' order; none ticked gives none.
	MultiSelect(ctx context.Context, title string, options []Choice) ([]string, error)
}

// Choice is one answer of [Prompter.Choose] or one option of
// [Prompter.Select] and [Prompter.MultiSelect].
type Choice struct {
	// Value is what the prompter returns; for Choose, also what the user
	// may type.
	Value string
	// Label is what the user sees (for Choose, also what they may type).
	Label string
}

// chosen returns the Value of the choice that answer names (its Value or
// its Label, case and surrounding blanks ignored), or "" and false.
func chosen(answer string, choices []Choice) (string, bool) {
	a := strings.ToLower(strings.TrimSpace(answer))
	for _, c := range choices {
		if a != "" && (a == strings.ToLower(c.Value) || a == strings.ToLower(c.Label)) {
			return c.Value, true
		}
	}
	return "", false
}

// NoPrompt is the [Prompter] used when not interactive: it fails at once
// with [ErrNoPrompt] and never reads stdin.
type NoPrompt struct{}

// Input fails with [ErrNoPrompt].
func (NoPrompt) Input(_ context.Context, title, _ string) (string, error) {
	return "", fmt.Errorf("%w (asked %q)", ErrNoPrompt, title)
}

// Confirm fails with [ErrNoPrompt].
func (NoPrompt) Confirm(_ context.Context, title string, _ bool) (bool, error) {
	return false, fmt.Errorf("%w (asked %q)", ErrNoPrompt, title)
}

// Secret fails with [ErrNoPrompt].
func (NoPrompt) Secret(_ context.Context, title string) (string, error) {
	return "", fmt.Errorf("%w (asked %q)", ErrNoPrompt, title)
}

// Choose fails with [ErrNoPrompt].
func (NoPrompt) Choose(_ context.Context, title string, _ []Choice) (string, error) {
	return "", fmt.Errorf("%w (asked %q)", ErrNoPrompt, title)
}

// Select fails with [ErrNoPrompt].
func (NoPrompt) Select(_ context.Context, title string, _ []Choice) (string, error) {
	return "", fmt.Errorf("%w (asked %q)", ErrNoPrompt, title)
}

// MultiSelect fails with [ErrNoPrompt].
func (NoPrompt) MultiSelect(_ context.Context, title string, _ []Choice) ([]string, error) {
	return nil, fmt.Errorf("%w (asked %q)", ErrNoPrompt, title)
}

// NeedFlag turns an [ErrNoPrompt] from a prompt into an error that names the
// flag supplying the value; other errors are returned unchanged.
func NeedFlag(err error, flag, what string) error {
	if errors.Is(err, ErrNoPrompt) {
		return fmt.Errorf("%s: no terminal to ask on; pass %s", what, flag)
	}
	return err
}
