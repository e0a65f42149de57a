package regtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/procgroup"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
)

// Status is the outcome of one [Check].
type Status string

// The outcomes of a check.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Skip: the check could not run (no server, a first version, test
	// commands without [Options.Run]); Detail says why.
	Skip Status = "skip"
)

// Check is one check of a [Report].
type Check struct {
	// Name says what was checked: "package", "render :ts",
	// "render in @presets/node", "update from 1.0.0 :ts", "semver impact",
	// "test :ts: npm test".
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Detail says what failed, why the check was skipped, or what passed.
	Detail string `json:"detail,omitempty"`
}

// String reads "FAIL render :js: <detail>".
func (c Check) String() string {
	s := strings.ToUpper(string(c.Status)) + " " + c.Name
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

// Report is what [Run] found.
type Report struct {
	// Dir is the registry directory; ID the registry it publishes
	// ("@main/quality/eslint@1.2.0"), "" when registry.json is unusable.
	Dir string `json:"dir"`
	ID  string `json:"id,omitempty"`
	// Checks are the checks in the order they ran.
	Checks []Check `json:"checks"`
	// Impact is the semver impact over the previous published version;
	// nil when it was not checked.
	Impact *impact.Report `json:"impact,omitempty"`
}

// Failures returns the failed checks.
func (r *Report) Failures() []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Status == Fail {
			out = append(out, c)
		}
	}
	return out
}

// Failed returns the number of failed checks.
func (r *Report) Failed() int { return len(r.Failures()) }

func (r *Report) add(name string, st Status, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
}

// Options configure [Run].
type Options struct {
	// Sources fetch what the directory does not hold: the registries it
	// depends on, the presets that list it and its published versions.
	// Nil means offline: registries with registryDependencies fail to
	// render, and the preset, update and impact checks are skipped with a
	// note.
	Sources *registryclient.Sources
	// Run runs the registry's test commands in each throwaway project
	// (with sh -c) and lets custom merge scripts run. The default runs no
	// code from the registry.
	Run bool
	// TestTimeout bounds each test command. The default is 5 minutes.
	TestTimeout time.Duration
	// TempDir is where the throwaway projects go. The default is
	// [os.TempDir].
	TempDir string
	// Progress, when set, is called with each check as it completes.
	Progress func(Check)
}

// Run checks the registry directory dir (see the package documentation).
// The error is for what stopped the checks themselves (the context, a
// temporary directory that cannot be made); everything about the registry
// is a failed [Check] in the report.
func Run(ctx context.Context, dir string, o Options) (*Report, error) {
	r := &Report{Dir: dir}
	progress := func() {
		if o.Progress != nil && len(r.Checks) > 0 {
			o.Progress(r.Checks[len(r.Checks)-1])
		}
	}
	pkg, err := registryclient.OpenPackage(dir)
	if err == nil && pkg.Manifest == nil {
		err = errors.New("this is a preset; a registry test checks registry directories (registry.json)")
	}
	if err != nil {
		r.add("package", Fail, "%s", strings.TrimPrefix(err.Error(), registryclient.ErrInvalidPackage.Error()+": "))
		progress()
		return r, nil
	}
	r.ID = pkg.ID()
	rel, err := pkg.Release()
	if err != nil {
		r.add("package", Fail, "%v", err)
		progress()
		return r, nil
	}
	m := pkg.Manifest
	id, _ := m.ID()
	r.add("package", Pass, "registry.json and %s pass the server's checks", english.Count(len(pkg.Files)-1, "declared file", "declared files"))
	progress()

	if bad := badJSON(m, rel.Files); len(bad) > 0 {
		r.add("json files", Fail, "%s", strings.Join(bad, "; "))
		progress()
	}

	tmp, err := os.MkdirTemp(o.TempDir, "jig-registry-test-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(tmp)
	src := &overlay{key: id.Key(), version: m.Version, m: m, files: rel.Files}
	if o.Sources != nil {
		src.base = o.Sources
	}
	eng, err := apply.New(src, apply.WithAllowScripts(o.Run))
	if err != nil {
		return r, err
	}
	t := &tester{r: r, o: o, eng: eng, tmp: tmp, id: id, m: m, progress: progress}

	// Alone, in every language.
	for _, lang := range Languages(m) {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		t.render(ctx, "render :"+string(lang), id.Key()+"@"+m.Version+":"+string(lang))
	}
	// Inside every preset that lists it.
	t.presets(ctx)
	// The update from the previous version, and the semver impact.
	t.previous(ctx, pkg)
	// The test commands.
	if len(m.Test) > 0 && !o.Run {
		r.add("test commands", Skip, "%d declared; pass --run to run them in each project (they are code from the registry)", len(m.Test))
		progress()
	}
	return r, ctx.Err()
}

// Languages returns the languages a registry supports, as "jig registry
// test" renders it: its language blocks and its default language; ts
// when it names none.
func Languages(m *registry.Manifest) []registry.Language {
	var out []registry.Language
	for _, l := range []registry.Language{registry.LangTS, registry.LangJS} {
		if _, ok := m.Languages[l]; ok || m.DefaultLanguage == l {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = []registry.Language{registry.LangTS}
	}
	return out
}

type tester struct {
	r        *Report
	o        Options
	eng      *apply.Engine
	tmp      string
	id       registry.ID
	m        *registry.Manifest
	n        int
	progress func()
}

// project returns a new throwaway project directory (not created).
func (t *tester) project() string {
	t.n++
	return filepath.Join(t.tmp, fmt.Sprintf("p%d", t.n), "project")
}

// render makes a project from template, checks it and runs the tests.
func (t *tester) render(ctx context.Context, name, template string) {
	dir := t.project()
	if _, err := t.eng.Run(ctx, apply.Request{Dir: dir, Template: template, Mode: apply.ModeInit, Name: "registry-test"}, false); err != nil {
		t.r.add(name, Fail, "%v", err)
		t.progress()
		return
	}
	if !t.clean(ctx, name, dir) {
		return
	}
	t.r.add(name, Pass, "")
	t.progress()
	t.runTests(ctx, name, dir)
}

// clean reports whether jig check finds dir as jig.json records it,
// adding a failed check when not.
func (t *tester) clean(ctx context.Context, name, dir string) bool {
	rep, err := t.eng.Check(ctx, dir)
	if err != nil {
		t.r.add(name, Fail, "check: %v", err)
		t.progress()
		return false
	}
	if !rep.Drift {
		return true
	}
	var drift []string
	for _, reg := range rep.Registries {
		for _, f := range reg.Files {
			if f.Status != apply.FileUnchanged {
				drift = append(drift, f.Target+" ("+string(f.Status)+")")
			}
		}
		for _, p := range reg.Packages {
			drift = append(drift, "package.json "+p.Section+" "+p.Name)
		}
	}
	t.r.add(name, Fail, "the check finds the fresh project changed: %s", strings.Join(drift, ", "))
	t.progress()
	return false
}

// runTests runs the test commands in dir when allowed.
func (t *tester) runTests(ctx context.Context, name, dir string) {
	if !t.o.Run {
		return
	}
	timeout := t.o.TestTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	for _, c := range t.m.Test {
		label := "test " + strings.TrimPrefix(name, "render ") + ": " + c
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cmd := exec.CommandContext(cctx, "sh", "-c", c)
		cmd.Dir = dir
		procgroup.Set(cmd) // cancelling ends what the command started too
		out, err := cmd.CombinedOutput()
		cancel()
		if ctx.Err() != nil {
			return // stopped (Ctrl-C): the command was killed, it did not fail
		}
		if err != nil {
			t.r.add(label, Fail, "%v\n%s", err, tail(out, 20))
		} else {
			t.r.add(label, Pass, "")
		}
		t.progress()
	}
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// presets renders the registry inside every preset of the server that
// lists it.
func (t *tester) presets(ctx context.Context) {
	if t.o.Sources == nil {
		t.r.add("presets", Skip, "offline: no server to list the presets from")
		t.progress()
		return
	}
	list, err := t.o.Sources.Presets(ctx)
	if err != nil {
		t.r.add("presets", Skip, "the presets could not be listed: %v", err)
		t.progress()
		return
	}
	found := 0
	for _, p := range list {
		if !slices.ContainsFunc(p.Registries, func(member string) bool {
			mid, err := registry.ParseID(member)
			return err == nil && mid.Key() == t.id.Key()
		}) {
			continue
		}
		found++
		t.render(ctx, "render in "+registry.PresetNamespace+"/"+p.Name, registry.PresetNamespace+"/"+p.Name)
	}
	if found == 0 {
		t.r.add("presets", Skip, "no preset on the server lists %s", t.id.Key())
		t.progress()
	}
}

// previous checks the update from the highest version published before
// this one, in every language, and the semver impact over it.
func (t *tester) previous(ctx context.Context, pkg *registryclient.Package) {
	const name = "update from the previous version"
	if t.o.Sources == nil {
		t.r.add(name, Skip, "offline: no server to fetch the previous version from; the update and semver impact checks did not run")
		t.progress()
		return
	}
	cl, err := t.o.Sources.Client(t.id.Namespace)
	if err != nil {
		t.r.add(name, Skip, "no source for %s: %v; the update and semver impact checks did not run", t.id.Namespace, err)
		t.progress()
		return
	}
	t.published(ctx, cl, pkg)
	prev, err := cl.PreviousVersion(ctx, t.id)
	switch {
	case err != nil:
		t.r.add(name, Skip, "the server could not list the published versions (%v); the update and semver impact checks did not run", err)
		t.progress()
		return
	case prev == "":
		t.r.add(name, Skip, "no earlier version of %s is published", t.id.Key())
		t.progress()
		return
	}
	rep, err := cl.Impact(ctx, pkg)
	if err != nil {
		t.r.add(name, Skip, "the server could not give %s@%s (%v); the update and semver impact checks did not run", t.id.Key(), prev, err)
		t.progress()
		return
	}
	for _, lang := range Languages(t.m) {
		t.update(ctx, prev, lang)
	}
	t.r.Impact = rep
	if err := rep.Check(); err != nil {
		t.r.add("semver impact", Fail, "%v", err)
	} else {
		t.r.add("semver impact", Pass, "%s change over %s; %s covers it", rep.Level, rep.From, rep.To)
	}
	t.progress()
}

// update makes a project of version prev and updates it to this one.
func (t *tester) update(ctx context.Context, prev string, lang registry.Language) {
	name := "update from " + prev + " :" + string(lang)
	dir := t.project()
	if _, err := t.eng.Run(ctx, apply.Request{Dir: dir, Template: t.id.Key() + "@" + prev + ":" + string(lang), Mode: apply.ModeInit, Name: "registry-test"}, false); err != nil {
		t.r.add(name, Fail, "rendering %s: %v", prev, err)
		t.progress()
		return
	}
	p, err := t.eng.PlanUpdate(ctx, apply.UpdateRequest{Dir: dir, Registries: []string{t.id.Key()}, To: t.m.Version})
	if err != nil {
		t.r.add(name, Fail, "%v", err)
		t.progress()
		return
	}
	var bad []string
	for _, f := range p.Files {
		switch f.Action {
		case apply.ActionConflict:
			bad = append(bad, f.Target+" conflicts")
		case apply.ActionKeep:
			bad = append(bad, f.Target+" kept ("+f.Reason+")")
		}
	}
	for _, c := range p.PackageConflicts {
		bad = append(bad, "package.json "+c.Path+" conflicts")
	}
	if len(bad) > 0 {
		t.r.add(name, Fail, "an untouched project does not update cleanly: %s", strings.Join(bad, ", "))
		t.progress()
		return
	}
	if err := t.eng.Apply(ctx, p); err != nil {
		t.r.add(name, Fail, "%v", err)
		t.progress()
		return
	}
	if !t.clean(ctx, name, dir) {
		return
	}
	t.r.add(name, Pass, "")
	t.progress()
}

// published checks that the version under test, when the server already
// has it, is the same content: otherwise publishing it would be refused
// (VERSION_EXISTS), and projects of that version would not get it.
func (t *tester) published(ctx context.Context, cl *registryclient.Client, pkg *registryclient.Package) {
	const name = "same version on the server"
	vs, err := cl.Versions(ctx, t.id)
	if err != nil || !slices.Contains(vs, t.m.Version) {
		return // not published (or the next check says why it cannot tell)
	}
	old, err := cl.Release(ctx, t.id)
	if err != nil {
		t.r.add(name, Skip, "%s is published, but the server could not give it (%v)", t.m.Version, err)
		t.progress()
		return
	}
	next, err := pkg.Release()
	if err != nil {
		t.r.add(name, Fail, "%v", err)
		t.progress()
		return
	}
	rep := impact.Compare(old, next)
	if len(rep.Changes) == 0 {
		t.r.add(name, Skip, "%s is already published with the same files: publishing it again would be refused; raise \"version\" for a new release", t.m.Version)
		t.progress()
		return
	}
	var what []string
	for _, c := range rep.Changes {
		what = append(what, c.String())
	}
	t.r.add(name, Fail, "%s is already published with other content (%s): raise \"version\" to %s", t.m.Version, strings.Join(what, "; "), impact.Next(t.m.Version, rep.Level))
	t.progress()
}

// badJSON lists the files merged as JSON (by their target's name or
// mergeStrategy) whose content is not JSON: the json strategy cannot
// merge them into a project that has the file already.
func badJSON(m *registry.Manifest, files map[string][]byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, lang := range []registry.Language{registry.LangTS, registry.LangJS} {
		for _, f := range m.ForLanguage(lang).Files {
			if f.Type == registry.FileAsset || merge.StrategyFor(f.Target, f.MergeStrategy) != registry.StrategyJSON {
				continue
			}
			var b []byte
			if f.Content != nil {
				b = []byte(*f.Content)
			} else {
				b = files[registry.NormalizeFilePath(f.Path)]
			}
			if _, err := merge.JSONKeys(f.Target, b); err != nil {
				msg := fmt.Sprintf("%s is merged as JSON but is not JSON: %v", f.Target, err)
				if !seen[msg] {
					seen[msg] = true
					out = append(out, msg)
				}
			}
		}
	}
	return out
}
