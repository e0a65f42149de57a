package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry/search"
)

// TestInitPicker: jig init without -t offers the presets and the
// registries on a terminal and initialises from the one picked; without a
// terminal it fails with the usage, asking nothing.
func TestInitPicker(t *testing.T) {
	t.Parallel()
	url := scaffoldServer(t)
	home := scaffoldHome(t, url)
	base := t.TempDir()
	p := &fakePrompter{answers: [][]string{{"@presets/small"}}}
	stdout, stderr, code := runCLI(t, home, p, "init", "-n", "app", "--skip-install", "--skip-git", "--dir", base)
	checkRun(t, stdout, stderr, code, 0, []string{"Project app initialized"}, []string{"Template: @presets/small"})
	if len(p.asked) != 1 || !strings.HasPrefix(p.asked[0], "Template") {
		t.Errorf("asked %q, want the template picker", p.asked)
	}
	if _, err := os.Stat(filepath.Join(base, "app", "eslint.config.js")); err != nil {
		t.Errorf("the preset was not applied: %v", err)
	}

	_, stderr, code = runCLI(t, home, nil, "init", "-n", "other", "--dir", base)
	checkRun(t, "", stderr, code, ExitError, nil, []string{"missing flags: --template"})
	if _, err := os.Stat(filepath.Join(base, "other")); err == nil {
		t.Error("init without a template wrote the project")
	}
}

// TestAddPicker: jig add without a registry offers those not installed yet
// and adds each one ticked; without a terminal it fails with the usage.
func TestAddPicker(t *testing.T) {
	t.Parallel()
	url := scaffoldServer(t)
	home := scaffoldHome(t, url)
	base := t.TempDir()
	if _, stderr, code := runCLI(t, home, nil, "init", "-t", "runtimes/base", "-n", "app", "--ci", "--dir", base); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	dir := filepath.Join(base, "app")
	opts := &optionsPrompter{fakePrompter: fakePrompter{answers: [][]string{{"@main/quality/lint"}}}}
	stdout, stderr, code := runCLI(t, home, opts, "add", "--skip-install", "--dir", dir)
	checkRun(t, stdout, stderr, code, 0, []string{"Added @main/quality/lint@1.1.0"}, nil)
	if want := []string{"@main/quality/lint"}; !slices.Equal(opts.offered, want) {
		t.Errorf("offered %q, want %q (not the installed runtimes/base)", opts.offered, want)
	}

	_, stderr, code = runCLI(t, home, nil, "add", "--dir", dir)
	checkRun(t, "", stderr, code, ExitError, nil, []string{`expected "<registry>"`})
}

// optionsPrompter records the values MultiSelect offered.
type optionsPrompter struct {
	fakePrompter
	offered []string
}

func (o *optionsPrompter) MultiSelect(ctx context.Context, title string, cs []Choice) ([]string, error) {
	for _, c := range cs {
		o.offered = append(o.offered, c.Value)
	}
	return o.fakePrompter.MultiSelect(ctx, title, cs)
}

// TestHitChoices: the pickers offer each named variant of a registry as
// its own line, right after the registry.
func TestHitChoices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hit  search.Hit
		want []string
	}{
		{name: "no variants", hit: search.Hit{Entry: search.Entry{Namespace: "@main", Path: "quality/lint", Type: "registry:quality"}}, want: []string{"@main/quality/lint"}},
		{name: "variants", hit: search.Hit{Entry: search.Entry{Namespace: "@main", Path: "services/go-service", Type: "registry:framework", Variants: []string{"distroless", "grpc"}}},
			want: []string{"@main/services/go-service", "@main/services/go-service:distroless", "@main/services/go-service:grpc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, c := range hitChoices(tc.hit) {
				got = append(got, c.Value)
				if !strings.HasPrefix(c.Label, c.Value+" (") {
					t.Errorf("label %q does not start with its value", c.Label)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
