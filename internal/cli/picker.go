package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryclient/apply"
)

// pickerDescription bounds a description in a picker line.
const pickerDescription = 60

// pickTemplate offers, on a terminal, the presets and the registries of
// every configured source in one searchable list, and returns the
// identifier picked. A source that cannot be listed is a warning; none at
// all is an error.
func pickTemplate(ctx context.Context, app *App) (string, error) {
	var opts []Choice
	var errs []error
	if cl, err := app.Client(registry.PresetNamespace); err != nil {
		errs = append(errs, err)
	} else if ps, err := cl.Presets(ctx); err != nil {
		errs = append(errs, err)
	} else {
		for _, p := range ps {
			id := registry.PresetNamespace + "/" + p.Name
			opts = append(opts, Choice{Value: id, Label: pickerLabel(id, "preset", p.Description)})
		}
	}
	hits, err := allRegistries(ctx, app)
	if err != nil {
		errs = append(errs, err)
	}
	for _, h := range hits {
		opts = append(opts, hitChoices(h)...)
	}
	if len(opts) == 0 {
		if len(errs) > 0 {
			return "", errors.Join(errs...)
		}
		return "", errors.New("no presets or registries to offer; give one with -t, e.g. " + suggest.InitCommand(registry.PresetNamespace+"/node"))
	}
	for _, err := range errs {
		app.Out.Warnf("could not list everything: %v", err)
	}
	return app.Prompt.Select(ctx, "Template (type / to search):", opts)
}

// pickRegistries offers, on a terminal, the registries of every configured
// source that the project in dir does not have yet, and returns those
// ticked.
func pickRegistries(ctx context.Context, app *App, dir string) ([]string, error) {
	installed := map[string]bool{}
	proj, err := apply.ReadProject(dir)
	switch {
	case err == nil:
		for k := range proj.Installed {
			installed[k] = true
		}
	case !errors.Is(err, apply.ErrNoProject):
		return nil, err
	}
	hits, err := allRegistries(ctx, app)
	if err != nil {
		return nil, err
	}
	var opts []Choice
	for _, h := range hits {
		if installed[h.ID()] {
			continue
		}
		opts = append(opts, hitChoices(h)...)
	}
	if len(opts) == 0 {
		return nil, errors.New("every registry the configured sources offer is installed already; nothing to add")
	}
	return app.Prompt.MultiSelect(ctx, "Registries to add (space ticks, / searches, enter adds):", opts)
}

// allRegistries lists the registries of every configured source (at most
// [search.MaxLimit]), warning about a source that failed.
func allRegistries(ctx context.Context, app *App) ([]search.Hit, error) {
	src, err := app.Sources()
	if err != nil {
		return nil, err
	}
	res, err := src.Search(ctx, search.Query{Limit: search.MaxLimit})
	if err != nil {
		return nil, err
	}
	for _, s := range res.Sources {
		if s.Err != nil {
			app.Out.Warnf("could not list %s (%s): %v", strings.Join(s.Namespaces, ", "), s.URL, s.Err)
		}
	}
	return res.Results, nil
}

// hitChoices are the picker lines of one registry: itself, then each of
// its named variants ("@main/services/go-service:distroless").
func hitChoices(h search.Hit) []Choice {
	kind := strings.TrimPrefix(h.Type, "registry:")
	out := []Choice{{Value: h.ID(), Label: pickerLabel(h.ID(), kind, h.Description)}}
	for _, v := range h.Variants {
		id := h.ID() + ":" + v
		out = append(out, Choice{Value: id, Label: pickerLabel(id, kind+", variant "+v, h.Description)})
	}
	return out
}

// pickerLabel is one line of a picker: the identifier, its kind and the
// start of its description.
func pickerLabel(id, kind, desc string) string {
	l := fmt.Sprintf("%s (%s)", id, kind)
	if d := oneLine(desc, pickerDescription); d != "" {
		l += "  " + d
	}
	return Escape(l)
}
