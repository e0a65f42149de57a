package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryclient/regtest"
)

// RegistryCmd groups the commands for registry authors.
type RegistryCmd struct {
	Test RegistryTestCmd `cmd:"" help:"Check registry directories before publishing: the server's checks, rendering in every language and preset, the update from the previous version, the semver impact (and --run: the registry's test commands)."`
	New  RegistryNewCmd  `cmd:"" help:"Write a starter registry.json (and one template file) for a new registry."`
}

// codeRegistryTest is the error code of a registry test with failures.
const codeRegistryTest = "REGISTRY_TEST_FAILED"

// RegistryTestCmd is "jig registry test [dir...] [--run] [--json]".
type RegistryTestCmd struct {
	Dirs     []string `arg:"" optional:"" name:"dir" help:"Registry directories (with registry.json). The default is the current directory."`
	RunTests bool     `name:"run" help:"Also run the registry's test commands (registry.json \"test\") in each throwaway project, and let custom merge scripts run. Off by default: both are code from the registry."`
	JSON     bool     `name:"json" help:"Print the reports as JSON."`
}

// Run tests each directory and prints what it found; any failed check
// fails the command.
func (c *RegistryTestCmd) Run(ctx context.Context, app *App) error {
	dirs := c.Dirs
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	src, err := app.Sources()
	if err != nil {
		return err
	}
	var reports []*regtest.Report
	var failed []string
	for _, dir := range dirs {
		o := regtest.Options{Sources: src, Run: c.RunTests}
		if !c.JSON {
			app.Out.Printf("Testing %s\n", dir)
			o.Progress = func(ch regtest.Check) { printTestCheck(app, ch) }
		}
		rep, err := regtest.Run(ctx, dir, o)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
		for _, f := range rep.Failures() {
			failed = append(failed, dir+": "+f.Name)
		}
		if !c.JSON {
			pass, skip := 0, 0
			for _, ch := range rep.Checks {
				switch ch.Status {
				case regtest.Pass:
					pass++
				case regtest.Skip:
					skip++
				}
			}
			app.Out.Printf("%s: %d passed, %d failed, %d skipped\n", label(rep), pass, rep.Failed(), skip)
		}
	}
	if c.JSON {
		if err := app.Out.JSON(map[string]any{"reports": reports, "failed": len(failed)}); err != nil {
			return err
		}
	}
	if len(failed) == 0 {
		return nil
	}
	msg := fmt.Sprintf("registry test failed: %s failed: %s", english.Count(len(failed), "check", "checks"), strings.Join(failed, "; "))
	// The reports are the answer (the --json document too); the error
	// goes to stderr, and the exit code says "not clean".
	return notClean(errorReport{Code: codeRegistryTest, Message: msg, headline: msg,
		Hint: "Fix what each FAIL line says, then run jig registry test again."})
}

func label(rep *regtest.Report) string {
	if rep.ID != "" {
		return rep.ID
	}
	return rep.Dir
}

// printTestCheck prints one check: its status, name and detail, a detail of
// several lines (a test command's output) indented below.
func printTestCheck(app *App, ch regtest.Check) {
	first, rest, _ := strings.Cut(ch.Detail, "\n")
	line := fmt.Sprintf("  %-4s  %s", strings.ToUpper(string(ch.Status)), ch.Name)
	if first != "" {
		line += ": " + first
	}
	app.Out.Println(line)
	if rest != "" {
		for _, l := range strings.Split(rest, "\n") {
			app.Out.Println("        " + l)
		}
	}
}

// RegistryNewCmd is "jig registry new <name> [--namespace] [--type] [--dir]".
type RegistryNewCmd struct {
	Name      string `arg:"" help:"The registry's name, or its storage path (tools/greeter): lowercase kebab-case segments."`
	Namespace string `name:"namespace" default:"@main" help:"The namespace to publish to."`
	Type      string `name:"type" default:"registry:feature" enum:"registry:runtime,registry:framework,registry:build,registry:feature,registry:testing,registry:quality" help:"The registry's type (${enum})."`
	Dir       string `name:"dir" help:"Where to write it. The default is a new directory named after the registry."`
}

// Run writes <dir>/registry.json and <dir>/templates/<name>.md, refusing
// to replace either.
func (c *RegistryNewCmd) Run(ctx context.Context, app *App) error {
	data, tmpl, err := starterRegistry(c.Name, c.Namespace, registry.Type(c.Type))
	if err != nil {
		return err
	}
	name := c.Name[strings.LastIndex(c.Name, "/")+1:]
	dir := c.Dir
	if dir == "" {
		dir = name
	}
	manifest := filepath.Join(dir, layout.ManifestFile)
	if _, err := os.Lstat(manifest); err == nil {
		return fmt.Errorf("%s already exists; choose another directory with --dir", manifest)
	}
	tfile := filepath.Join(dir, "templates", name+".md")
	if err := os.MkdirAll(filepath.Dir(tfile), 0o755); err != nil {
		return err
	}
	if err := writeNew(tfile, tmpl, 0o644); err != nil {
		return err
	}
	if err := writeNew(manifest, data, 0o644); err != nil {
		return err
	}
	app.Out.Success("Wrote %s and %s", manifest, tfile)
	app.Out.Printf("Next: edit them, then run 'jig registry test %s' and 'jig publish %s'.\n", dir, dir)
	return nil
}

// starterRegistry returns the registry.json that jig registry new writes
// for name (a name or a storage path) and the template file it declares.
// The document passes [registry.ValidateManifestJSON].
func starterRegistry(name, ns string, typ registry.Type) (manifest, template []byte, err error) {
	ns = strings.ToLower(ns)
	if !registry.ValidNamespace(ns) {
		return nil, nil, fmt.Errorf("namespace %q is not valid: it starts with @, e.g. @main or @team", ns)
	}
	base := name[strings.LastIndex(name, "/")+1:]
	type file struct {
		Target string `json:"target"`
		Type   string `json:"type"`
		Path   string `json:"path"`
	}
	m := struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Namespace   string `json:"namespace"`
		Path        string `json:"path,omitempty"`
		Type        string `json:"type"`
		Version     string `json:"version"`
		Priority    int    `json:"priority"`
		Description string `json:"description"`
		Changelog   string `json:"changelog"`
		Files       []file `json:"files"`
	}{
		Schema: "https://jig.dev/schemas/registry-item.json", Name: base, Namespace: ns,
		Type: string(typ), Version: "0.1.0", Priority: 4,
		Description: "What " + base + " adds to a project.", Changelog: "First version.",
		Files: []file{{Target: "docs/" + base + ".md", Type: "registry:docs", Path: "templates/" + base + ".md"}},
	}
	if strings.Contains(name, "/") {
		m.Path = name
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	data = append(data, '\n')
	if err := registry.ValidateManifestJSON(data); err != nil {
		return nil, nil, fmt.Errorf("%q cannot name a registry: %w", name, err)
	}
	pm, err := registry.ParseManifest(data)
	if err == nil {
		_, err = pm.StorageSegments()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%q cannot name a registry: %w", name, err)
	}
	return data, []byte("# " + base + "\n\nWritten by the " + base + " registry.\n"), nil
}

// writeNew creates the file path with data; an existing file (or a
// symbolic link in its place) is an error, never replaced.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
