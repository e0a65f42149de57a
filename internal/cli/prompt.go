package cli

import (
	"context"
	"errors"
	"fmt"
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

// NeedFlag turns an [ErrNoPrompt] from a prompt into an error that names the
// flag supplying the value; other errors are returned unchanged.
func NeedFlag(err error, flag, what string) error {
	if errors.Is(err, ErrNoPrompt) {
		return fmt.Errorf("%s: no terminal to ask on; pass %s", what, flag)
	}
	return err
}
