package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// SearchCmd is "jig search <query> [--namespace] [--type] [--tag] [--limit] [--json]".
type SearchCmd struct {
	Query     string `arg:"" optional:"" help:"Words to look for in registry names, paths, descriptions, tags and types. Empty lists every registry."`
	Namespace string `name:"namespace" short:"n" help:"Search only this namespace (and only its configured source)."`
	Type      string `name:"type" placeholder:"TYPE" help:"Only registries of this type: runtime, framework, build, feature, testing or quality (registry:<type> too)."`
	Tag       string `name:"tag" help:"Only registries with this tag."`
	Limit     int    `name:"limit" default:"20" help:"At most this many results (1-100)."`
	JSON      bool   `name:"json" help:"Print the results as JSON."`
}

// Validate checks the flags before any request is made.
func (c *SearchCmd) Validate() error {
	if c.Namespace != "" {
		if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
			return err
		}
	}
	if c.Type != "" && searchType(c.Type) == "" {
		return fmt.Errorf("--type %q is not a registry type; use one of %s", c.Type, strings.Join(searchTypes(), ", "))
	}
	return c.query().Validate()
}

// searchTypes are the values --type completes: the registry types without
// their "registry:" prefix.
func searchTypes() []string {
	var out []string
	for _, t := range registry.Types() {
		out = append(out, strings.TrimPrefix(string(t), "registry:"))
	}
	return out
}

// searchType returns the registry type that --type t names ("quality" or
// "registry:quality", any case), or "" for none.
func searchType(t string) registry.Type {
	t = strings.ToLower(strings.TrimSpace(t))
	for _, rt := range registry.Types() {
		if t == string(rt) || "registry:"+t == string(rt) {
			return rt
		}
	}
	return ""
}

func (c *SearchCmd) query() search.Query {
	return search.Query{Text: c.Query, Namespace: c.Namespace, Type: c.Type, Tag: c.Tag, Limit: c.Limit}
}

// searchJSON is the --json document of jig search.
type searchJSON struct {
	Query   string         `json:"query"`
	Results []search.Hit   `json:"results"`
	Sources []sourceResult `json:"sources"`
}

type sourceResult struct {
	URL        string                            `json:"url,omitempty"`
	Namespaces []string                          `json:"namespaces"`
	Fallback   bool                              `json:"fallback,omitempty"`
	Truncated  bool                              `json:"truncated,omitempty"`
	Refused    []registryclient.RefusedNamespace `json:"refused,omitempty"`
	Error      string                            `json:"error,omitempty"`
}

// Run searches every configured source and prints the merged results.
func (c *SearchCmd) Run(ctx context.Context, app *App) error {
	src, err := app.Sources()
	if err != nil {
		return err
	}
	res, err := src.Search(ctx, c.query())
	if err != nil {
		return err
	}
	out := searchJSON{Query: c.Query, Results: res.Results}
	for _, s := range res.Sources {
		sr := sourceResult{URL: s.URL, Namespaces: s.Namespaces, Fallback: s.Fallback, Truncated: s.Truncated, Refused: s.Refused}
		if s.Err != nil {
			sr.Error = s.Err.Error()
			app.Out.Warnf("could not search %s (%s): %v", strings.Join(s.Namespaces, ", "), s.URL, s.Err)
		}
		for _, r := range s.Refused {
			answer := strconv.Itoa(r.Status)
			if r.Code != "" {
				answer += " " + string(r.Code)
			}
			app.Out.Warnf("did not search %s: %s refused to list it (%s); if you have a token for it, run 'jig config set %s --url %s --token <token>'", r.Namespace, s.URL, answer, r.Namespace, s.URL)
		}
		if s.Truncated {
			app.Out.Warnf("%s has no search; looked at the first %d registries only, results may be missing", s.URL, registryclient.DefaultFallbackRegistries)
		}
		out.Sources = append(out.Sources, sr)
	}
	if c.JSON {
		return app.Out.JSON(out)
	}
	if len(res.Results) == 0 {
		if c.Query == "" {
			app.Out.Println("No registries found.")
		} else {
			app.Out.Printf("No registries match %q.\n", c.Query)
		}
		return nil
	}
	printHits(app.Out, res.Results)
	return nil
}

// printHits writes search results for people, one line each.
func printHits(o *Output, hits []search.Hit) {
	width := 0
	for _, h := range hits {
		width = max(width, len(h.ID())+1+len(h.Version))
	}
	for _, h := range hits {
		ref := h.ID() + "@" + h.Version
		line := fmt.Sprintf("%-*s  %s", width, ref, strings.TrimPrefix(h.Type, "registry:"))
		if d := oneLine(h.Description, 80); d != "" {
			line += "  " + d
		}
		if len(h.Variants) > 0 {
			line += "  [variants: " + strings.Join(h.Variants, ", ") + "]"
		}
		o.Println(line)
	}
	o.Printf("\nMore about one: jig info %s\n", hits[0].ID())
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// InfoCmd is "jig info <registry>[@version] [--json]".
type InfoCmd struct {
	Registry string `arg:"" help:"The registry, e.g. @main/quality/eslint or quality/eslint@1.0.0."`
	JSON     bool   `name:"json" help:"Print the manifest, versions and commands as JSON."`
}

// infoJSON is the --json document of jig info.
type infoJSON struct {
	*registryclient.Info
	Languages []string `json:"languages"`
	// Variants are the registry's named variants, sorted; [] for none.
	Variants    []variantJSON `json:"variants"`
	Files       []fileJSON    `json:"files"`
	AddCommand  string        `json:"addCommand"`
	InitCommand string        `json:"initCommand"`
	// SignedBy are the version's signatures as the server reports them
	// (null when the server serves none).
	SignedBy []wire.SignatureInfo `json:"signedBy"`
}

type fileJSON struct {
	Target   string `json:"target"`
	Strategy string `json:"strategy"`
	Language string `json:"language,omitempty"`
	Variant  string `json:"variant,omitempty"`
}

type variantJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Run fetches and prints what there is to know about one registry.
func (c *InfoCmd) Run(ctx context.Context, app *App) error {
	id, err := registry.ParseID(c.Registry)
	if err != nil {
		return err
	}
	if id.IsPreset() {
		return fmt.Errorf("%s is a preset; list presets with 'jig list @presets'", c.Registry)
	}
	src, err := app.Sources()
	if err != nil {
		return err
	}
	if id, err = src.ParseID(ctx, c.Registry); err != nil {
		return err
	}
	info, err := src.Info(ctx, id)
	if err != nil {
		return explainNotFound(ctx, app, c.Registry, err)
	}
	m := info.Manifest
	var files []fileJSON
	for _, f := range m.Files {
		files = append(files, fileJSON{Target: f.Target, Strategy: string(merge.StrategyFor(f.Target, f.MergeStrategy))})
	}
	langs := info.Languages()
	for _, l := range langs {
		for _, f := range m.Languages[registry.Language(l)].Files {
			files = append(files, fileJSON{Target: f.Target, Strategy: string(merge.StrategyFor(f.Target, f.MergeStrategy)), Language: l})
		}
	}
	variants := []variantJSON{}
	for _, v := range m.VariantNames() {
		variants = append(variants, variantJSON{Name: v, Description: m.Variants[v].Description})
		for _, f := range m.Variants[v].Files {
			files = append(files, fileJSON{Target: f.Target, Strategy: string(merge.StrategyFor(f.Target, f.MergeStrategy)), Variant: v})
		}
	}
	sigs := signedBy(ctx, app, src, id, info.Version)
	if c.JSON {
		if files == nil {
			files = []fileJSON{}
		}
		j := infoJSON{Info: info, Languages: langs, Variants: variants, Files: files, AddCommand: suggest.AddCommand(info.Ref()), InitCommand: suggest.InitCommand(info.Ref())}
		if sigs != nil {
			j.SignedBy = sigs.Signatures
		}
		return app.Out.JSON(j)
	}
	printInfo(app.Out, info, langs, files, sigs)
	return nil
}

// printInfo writes what jig info knows about a registry, for people, and
// who signed it when sigs holds the server's answer.
func printInfo(o *Output, info *registryclient.Info, langs []string, files []fileJSON, sigs ...*wire.Signatures) {
	m := info.Manifest
	latest := ""
	if info.Version == info.Latest {
		latest = " (latest)"
	}
	o.Printf("%s@%s%s\n", info.ID, info.Version, latest)
	if d := strings.TrimSpace(m.Description); d != "" {
		o.Printf("%s\n", d)
	}
	o.Println()
	o.Printf("Type:       %s\n", m.Type)
	o.Printf("Versions:   %s\n", strings.Join(info.Versions, ", "))
	if len(langs) > 0 {
		o.Printf("Languages:  %s (default %s)\n", strings.Join(langs, ", "), cmp.Or(string(m.DefaultLanguage), langs[0]))
	}
	if names := m.VariantNames(); len(names) > 0 {
		o.Printf("Variants:   %s (default: %s)\n", strings.Join(names, ", "), cmp.Or(m.DefaultVariant, "none"))
		for _, v := range names {
			if d := strings.TrimSpace(m.Variants[v].Description); d != "" {
				o.Printf("  %s: %s\n", v, d)
			}
		}
	}
	if len(m.Tags) > 0 {
		o.Printf("Tags:       %s\n", strings.Join(m.Tags, ", "))
	}
	for _, s := range sigs {
		printSignedBy(o, s)
	}
	if len(files) > 0 {
		o.Printf("\nFiles (%d):\n", len(files))
		width := 0
		for _, f := range files {
			width = max(width, len(f.Target))
		}
		for _, f := range files {
			line := fmt.Sprintf("  %-*s  %s", width, f.Target, f.Strategy)
			if f.Language != "" {
				line += "  (" + f.Language + " only)"
			}
			if f.Variant != "" {
				line += "  (" + f.Variant + " only)"
			}
			o.Println(line)
		}
	}
	deps, dev := "npm dependencies", "npm devDependencies"
	switch m.Ecosystem {
	case registry.EcosystemGo:
		deps, dev = "go.mod requirements", "go.mod requirements (dev)"
	case registry.EcosystemPython:
		deps, dev = "pyproject.toml dependencies", "pyproject.toml dev dependencies"
	}
	printDeps(o, deps, m.Dependencies)
	printDeps(o, dev, m.DevDependencies)
	if len(m.RegistryDependencies) > 0 {
		o.Printf("\nRegistry dependencies:\n")
		for _, d := range m.RegistryDependencies {
			o.Printf("  %s\n", d)
		}
	}
	if m.Changelog != "" {
		o.Printf("\nWhat changed in %s:\n", info.Version)
		printChangelogText(o, "  ", m.Changelog)
	}
	o.Printf("\nAdd it to a project:  %s\n", suggest.AddCommand(info.Ref()))
	o.Printf("Start a project:      %s\n", suggest.InitCommand(info.Ref()))
}

func printDeps(o *Output, title string, deps map[string]string) {
	if len(deps) == 0 {
		return
	}
	o.Printf("\n%s:\n", title)
	names := make([]string, 0, len(deps))
	for n := range deps {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		o.Printf("  %s %s\n", n, deps[n])
	}
}
