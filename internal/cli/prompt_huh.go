package cli

import (
	"context"
	"errors"
	"io"

	"github.com/charmbracelet/huh"
)

// huhPrompter is the interactive [Prompter]; it is the only file that
// imports huh.
type huhPrompter struct {
	in  io.Reader
	out io.Writer
}

func newHuhPrompter(in io.Reader, out io.Writer) Prompter { return huhPrompter{in: in, out: out} }

func (p huhPrompter) run(ctx context.Context, f huh.Field) error {
	err := huh.NewForm(huh.NewGroup(f)).WithInput(p.in).WithOutput(p.out).WithShowHelp(false).RunWithContext(ctx)
	if errors.Is(err, huh.ErrUserAborted) {
		return ErrAborted
	}
	return err
}

// Input shows a huh text input; an empty answer means def.
func (p huhPrompter) Input(ctx context.Context, title, def string) (string, error) {
	v := def
	err := p.run(ctx, huh.NewInput().Title(title).Placeholder(def).Value(&v))
	if err != nil {
		return "", err
	}
	if v == "" {
		v = def
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
