package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakePrompter answers Confirm with yes/no or aborts; Choose, Select
// and MultiSelect take their answers from answers, in order.
type fakePrompter struct {
	confirm bool
	err     error
	asked   []string
	answers [][]string
}

func (f *fakePrompter) askedOrNil() []string {
	if f == nil {
		return nil
	}
	return f.asked
}

func (f *fakePrompter) next(title string) []string {
	f.asked = append(f.asked, title)
	if len(f.answers) == 0 {
		return nil
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a
}

func (f *fakePrompter) Secret(ctx context.Context, title string) (string, error) {
	return f.Choose(ctx, title, nil)
}

func (f *fakePrompter) Choose(_ context.Context, title string, _ []Choice) (string, error) {
	a := f.next(title)
	if len(a) == 0 {
		return "", f.err
	}
	return a[0], f.err
}

func (f *fakePrompter) Select(ctx context.Context, title string, cs []Choice) (string, error) {
	return f.Choose(ctx, title, cs)
}

func (f *fakePrompter) MultiSelect(_ context.Context, title string, _ []Choice) ([]string, error) {
	return f.next(title), f.err
}

func (f *fakePrompter) Input(_ context.Context, title, def string) (string, error) {
	f.asked = append(f.asked, title)
	return def, f.err
}

func (f *fakePrompter) Confirm(_ context.Context, title string, _ bool) (bool, error) {
	f.asked = append(f.asked, title)
	return f.confirm, f.err
}

func runCLI(t *testing.T, home string, p Prompter, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": home}
	app := newApp(strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	app.testPrompt = p
	code = run(t.Context(), args, app)
	return out.String(), errb.String(), code
}

func TestConfigRemovePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		prompt     *fakePrompter
		wantCode   int
		wantStdout string
		wantStderr string
		wantKept   bool
	}{
		{name: "confirmed", prompt: &fakePrompter{confirm: true}, wantStdout: "Registry @co removed successfully\n"},
		{name: "declined", prompt: &fakePrompter{confirm: false}, wantStdout: "Operation cancelled\n", wantKept: true},
		{name: "aborted", prompt: &fakePrompter{err: ErrAborted}, wantCode: ExitAborted, wantStderr: "Operation cancelled\n", wantKept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, ".jigrc"), []byte(`{"registries":{"@co":"http://x.example"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCLI(t, home, tt.prompt, "config", "rm", "@co")
			if code != tt.wantCode || stdout != tt.wantStdout || stderr != tt.wantStderr {
				t.Fatalf("got code %d stdout %q stderr %q, want %d %q %q", code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if got, want := strings.Join(tt.prompt.asked, "|"), "Remove registry '@co'?"; got != want {
				t.Errorf("got prompts %q, want %q", got, want)
			}
			data, _ := os.ReadFile(filepath.Join(home, ".jigrc"))
			if kept := strings.Contains(string(data), "@co"); kept != tt.wantKept {
				t.Errorf("got @co kept=%v, want %v; file:\n%s", kept, tt.wantKept, data)
			}
		})
	}
}

// TestNoInputAndCI: --no-input never prompts and names the flags that
// answer; --ci is --yes --no-input, so the confirmation is answered yes
// without asking.
func TestNoInputAndCI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flag       string
		wantCode   int
		wantStderr string
		wantKept   bool
	}{
		{"--no-input", ExitError, "pass --yes (-y) or -f (--force)", true},
		{"--ci", ExitOK, "", false},
		{"-y", ExitOK, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, ".jigrc"), []byte(`{"registries":{"@co":"http://x.example"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			p := &fakePrompter{confirm: false}
			_, stderr, code := runCLI(t, home, p, tt.flag, "config", "rm", "@co")
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantStderr) {
				t.Fatalf("got code %d stderr %q, want %d and %q", code, stderr, tt.wantCode, tt.wantStderr)
			}
			if len(p.asked) != 0 {
				t.Errorf("got prompts %v with %s, want none", p.asked, tt.flag)
			}
			data, _ := os.ReadFile(filepath.Join(home, ".jigrc"))
			if kept := strings.Contains(string(data), "@co"); kept != tt.wantKept {
				t.Errorf("got @co kept=%v, want %v", kept, tt.wantKept)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errb bytes.Buffer
	home := t.TempDir()
	app := newApp(strings.NewReader(""), &out, &errb, func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if code := run(ctx, []string{"list", "--registry", "@main"}, app); code != ExitAborted {
		t.Fatalf("got exit %d, want %d; stderr %q", code, ExitAborted, errb.String())
	}
}

func TestUsageError(t *testing.T) {
	t.Parallel()
	_, stderr, code := runCLI(t, t.TempDir(), nil, "nosuchcommand")
	if code != ExitError || !strings.HasPrefix(stderr, "Error: ") {
		t.Fatalf("got code %d stderr %q, want 1 and an Error: line", code, stderr)
	}
}

func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, t.TempDir(), nil, "--help")
	if code != ExitOK || !strings.Contains(stdout, "config list (ls)") {
		t.Fatalf("got code %d stdout %q, want 0 and the command list", code, stdout)
	}
}

// TestHeaderValues: one --header takes every "Name: Value" after it, as
// the reference's --header <header...> does (issue 30, item 14).
func TestHeaderValues(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want []string }{
		{[]string{"config", "set", "@x", "--header", "A: 1", "B: 2"}, []string{"config", "set", "@x", "--header", "A: 1", "--header", "B: 2"}},
		{[]string{"config", "set", "--header", "A: 1", "B: 2", "@x"}, []string{"config", "set", "--header", "A: 1", "--header", "B: 2", "@x"}},
		{[]string{"config", "set", "@x", "--header=A: 1", "B: 2", "--token", "t"}, []string{"config", "set", "@x", "--header=A: 1", "--header", "B: 2", "--token", "t"}},
		// a value without a colon is not a header: kong reports it
		{[]string{"config", "set", "@x", "--header", "A: 1", "oops"}, []string{"config", "set", "@x", "--header", "A: 1", "oops"}},
		// the value right after --header is kong's, whatever it is
		{[]string{"config", "set", "@x", "--header", "--weird"}, []string{"config", "set", "@x", "--header", "--weird"}},
		// other commands are left alone
		{[]string{"add", "a:b", "--header", "A: 1", "B: 2"}, []string{"add", "a:b", "--header", "A: 1", "B: 2"}},
		{[]string{"config", "set", "@x", "--", "--header", "A: 1", "B: 2"}, []string{"config", "set", "@x", "--", "--header", "A: 1", "B: 2"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, headerValues(tt.in)); diff != "" {
			t.Errorf("headerValues(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
