package webui_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

const teamToken = "team-token-0123456789"

// catalogServer serves a small catalog: a public @main and a gated @team.
func catalogServer(t *testing.T) *httptest.Server {
	t.Helper()
	manifest := func(ns, name, typ, version, desc, extra string) string {
		return fmt.Sprintf(`{"name":%q,"namespace":%q,"version":%q,"type":"registry:%s","priority":6,"description":%q%s}`, name, ns, version, typ, desc, extra)
	}
	st := testenv.MemoryStorage(t, map[string]string{
		"@main/quality/eslint/versions.json": `{"versions":["1.2.0","1.1.0","1.0.0"]}`,
		"@main/quality/eslint/1.2.0/registry.json": manifest("@main", "eslint", "quality", "1.2.0",
			"ESLint flat config with TypeScript rules, ready for Node.js projects.",
			`,"tags":["lint","typescript"],"changelog":"### Changed\n- TypeScript rules through typescript-eslint.","devDependencies":{"eslint":"^9.0.0","typescript-eslint":"^8.0.0"},"registryDependencies":["@main/runtimes/node"],
			  "files":[{"target":"eslint.config.js","type":"registry:config","path":"templates/eslint.config.js"},{"target":"package.json","type":"registry:config","path":"templates/package.json"},{"target":"docs/eslint.md","type":"registry:docs","path":"README.md"}],
			  "languages":{"ts":{"files":[{"target":"tsconfig.eslint.json","type":"registry:config","path":"templates/tsconfig.eslint.json"}]},"js":{}},"defaultLanguage":"ts"`),
		"@main/quality/eslint/1.1.0/registry.json": manifest("@main", "eslint", "quality", "1.1.0",
			"ESLint flat config for Node.js projects.",
			`,"tags":["lint"],"changelog":"### Added\n- Flat config.","files":[{"target":"eslint.config.js","type":"registry:config","path":"templates/eslint.config.js"},{"target":"package.json","type":"registry:config","path":"templates/package.json"}]`),
		"@main/quality/eslint/1.1.0/templates/eslint.config.js":     "import js from \"@eslint/js\";\n\nexport default [js.configs.recommended];\n",
		"@main/quality/eslint/1.1.0/templates/package.json":         "{\n  \"scripts\": { \"lint\": \"eslint .\" }\n}\n",
		"@main/quality/eslint/1.2.0/templates/eslint.config.js":     "import js from \"@eslint/js\";\nimport tseslint from \"typescript-eslint\";\n\nexport default tseslint.config(js.configs.recommended, ...tseslint.configs.recommended);\n",
		"@main/quality/eslint/1.2.0/README.md":                      "# ESLint\n\nA flat config with **TypeScript** rules.\n\n## Scripts\n\n| Script | Runs |\n|---|---|\n| `lint` | `eslint .` |\n",
		"@main/quality/eslint/1.2.0/templates/package.json":         "{\n  \"scripts\": { \"lint\": \"eslint .\" }\n}\n",
		"@main/quality/eslint/1.2.0/templates/tsconfig.eslint.json": "{ \"extends\": \"./tsconfig.json\", \"include\": [\"src\", \"test\"] }\n",
		"@main/quality/eslint-plugin-react/versions.json":           `{"versions":["1.0.0"]}`,
		"@main/quality/eslint-plugin-react/1.0.0/registry.json":     manifest("@main", "eslint-plugin-react", "quality", "1.0.0", "React and JSX rules for ESLint.", `,"tags":["lint","react"]`),
		"@main/quality/prettier/versions.json":                      `{"versions":["3.0.0"]}`,
		"@main/quality/prettier/3.0.0/registry.json":                manifest("@main", "prettier", "quality", "3.0.0", "Opinionated code formatter.", `,"tags":["format"]`),
		"@main/runtimes/node/versions.json":                         `{"versions":["1.0.0"]}`,
		"@main/runtimes/node/1.0.0/registry.json":                   manifest("@main", "node", "runtime", "1.0.0", "Node.js runtime: package.json, .nvmrc and .gitignore.", ""),
		"@main/testing/vitest/versions.json":                        `{"versions":["1.0.0"]}`,
		"@main/testing/vitest/1.0.0/registry.json":                  manifest("@main", "vitest", "testing", "1.0.0", "Unit tests with Vitest.", `,"tags":["test"]`),
		"@team/tools/secret-lint/versions.json":                     `{"versions":["2.0.0"]}`,
		"@team/tools/secret-lint/2.0.0/registry.json":               manifest("@team", "secret-lint", "quality", "2.0.0", "The team's private lint rules.", `,"path":"tools/secret-lint"`),
		"presets/node-library/preset.json":                          `{"name":"node-library","version":"1.0.0","description":"A TypeScript library for Node.js","registries":["@main/runtimes/node","@main/quality/eslint"]}`,
	})
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@team": [{"token": "` + teamToken + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return serveCatalog(t, registryserver.WithStorage(st), registryserver.WithAuth(auth))
}

// serveCatalog serves a registryserver with the web catalog at "/" and
// opts on loopback until the test ends.
func serveCatalog(t *testing.T, opts ...registryserver.Option) *httptest.Server {
	t.Helper()
	h, err := registryserver.New(append(opts, registryserver.WithWebCatalog("/"))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// browser starts a headless Chromium with a fresh profile and returns a
// context driving one tab, and the problems (script exceptions, console
// errors such as CSP violations) seen so far.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	bin := testenv.Chromium(t)
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile for a moment after the browser exits.
	profile, err := os.MkdirTemp("", "jig-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 900),
	}
	// A bound for the whole browser session, not a timing assertion.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			// A page answered 404 on purpose is logged by the network
			// source; anything else at error level (CSP violations
			// included) is a problem.
			if ev.Entry.Level == log.LevelError && ev.Entry.Source != log.SourceNetwork {
				problems = append(problems, "console: "+ev.Entry.Text)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				problems = append(problems, "console.error")
			}
		}
	})
	if err := chromedp.Run(bctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return bctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// screenshot saves dir/name.png: the whole page, or the element sel
// selects.
func screenshot(dir, name, sel string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var buf []byte
		shoot := chromedp.FullScreenshot(&buf, 100)
		if sel != "" {
			shoot = chromedp.Screenshot(sel, &buf, chromedp.ByQuery)
		}
		if err := shoot.Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}

// TestBrowser drives the catalog in a real browser: home, search as you
// type, a registry page, a file; sign in with a token to see the gated
// namespace, sign out and no longer see it. Screenshots go to
// $JIG_TEST_ARTIFACTS/TestBrowser (or a temporary directory, logged).
func TestBrowser(t *testing.T) {
	srv := catalogServer(t)
	ctx, problems := browser(t)
	dir := testenv.Artifacts(t)
	shot := func(name string) chromedp.Action { return screenshot(dir, name, "") }
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("reading "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
		return s
	}

	// Home: the public namespace, not the gated one.
	run("home", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#namespaces", chromedp.ByQuery), shot("1-home"))
	if ns := text("#namespaces"); !strings.Contains(ns, "@main") || strings.Contains(ns, "@team") {
		t.Errorf("home namespaces: got %q, want @main and not @team", ns)
	}
	// Browse: the types and tags of what a visitor may read, the latest
	// published.
	run("browse", chromedp.WaitVisible("#browse-types", chromedp.ByQuery), chromedp.WaitVisible("#browse-tags", chromedp.ByQuery), shot("9-browse"))
	if types := text("#browse-types"); !strings.Contains(types, "quality") || !strings.Contains(types, "runtime") || !strings.Contains(types, "3 registries") {
		t.Errorf("browse by type: got %q, want quality (3 registries) and runtime", types)
	}
	if tags := text("#browse-tags"); !strings.Contains(tags, "lint") || !strings.Contains(tags, "typescript") || strings.Contains(tags, "secret") {
		t.Errorf("browse by tag: got %q", tags)
	}
	if recent := text("#browse-recent"); !strings.Contains(recent, "@main/quality/eslint") || strings.Contains(recent, "@team") {
		t.Errorf("recently published: got %q", recent)
	}
	run("browse by type", chromedp.Click(`#browse-types a[href="/-/search?type=registry%3Atesting"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#results a[href="/-/r/@main/testing/vitest"]`, chromedp.ByQuery))
	if res := text("#results"); strings.Contains(res, "eslint") {
		t.Errorf("browsing type testing lists %q", res)
	}

	// Search as you type: the results change without submitting the form.
	run("search page", chromedp.Navigate(srv.URL+"/-/search"), chromedp.WaitVisible("#q", chromedp.ByQuery))
	if all := text("#results"); !strings.Contains(all, "@main/testing/vitest") {
		t.Errorf("all registries: got %q", all)
	}
	run("typing", chromedp.SendKeys("#q", "eslint", chromedp.ByQuery),
		chromedp.WaitNotPresent(`#results a[href="/-/r/@main/testing/vitest"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#results a[href="/-/r/@main/quality/eslint"]`, chromedp.ByQuery),
		shot("2-search"))
	res := text("#results")
	if !strings.Contains(res, "@main/quality/eslint-plugin-react") || strings.Contains(res, "prettier") || strings.Contains(res, "secret") {
		t.Errorf("search results for eslint: got %q", res)
	}
	var loc string
	run("location", chromedp.Location(&loc))
	if !strings.HasSuffix(loc, "/-/search?q=eslint") {
		t.Errorf("the URL follows the query: got %s", loc)
	}

	// The registry page, its copy buttons, a file.
	run("registry page", chromedp.Click(`#results a[href="/-/r/@main/quality/eslint"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#reg-title", chromedp.ByQuery), chromedp.WaitVisible("button.copy", chromedp.ByQuery), shot("3-registry"))
	if title := text("#reg-title"); !strings.Contains(title, "@main/quality/eslint") || !strings.Contains(title, "1.2.0") {
		t.Errorf("registry title: got %q", title)
	}
	if readme := text("#readme h3"); readme != "ESLint" {
		t.Errorf("README heading: got %q", readme)
	}
	if cell := text("#readme td code"); cell != "lint" {
		t.Errorf("README table: got %q", cell)
	}
	var add string
	run("add command", chromedp.Value("#cmd-add", &add, chromedp.ByQuery))
	if add != "jig add @main/quality/eslint" {
		t.Errorf("add command: got %q", add)
	}
	run("dark mode", chromedp.ActionFunc(func(ctx context.Context) error {
		return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}).Do(ctx)
	}), shot("4-registry-dark"), chromedp.ActionFunc(func(ctx context.Context) error {
		return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}).Do(ctx)
	}))
	run("file page", chromedp.Click(`a[href$="/files/templates/eslint.config.js"]`, chromedp.ByQuery),
		chromedp.WaitVisible("pre.code", chromedp.ByQuery), shot("5-file"))
	if code := text("pre.code"); !strings.Contains(code, "tseslint.config") {
		t.Errorf("file contents: got %q", code)
	}
	// Highlighted on the server: chroma's token classes, styled by the
	// static chroma.css (a colour other than the text's), no style attributes.
	var kw struct {
		Classes []string `json:"classes"`
		Styled  int      `json:"styled"`
		Same    bool     `json:"same"`
	}
	run("highlighting", chromedp.Evaluate(`(() => {
		const spans = [...document.querySelectorAll("pre.code.chroma span[class]")];
		const k = document.querySelector("pre.code.chroma .kn, pre.code.chroma .k, pre.code.chroma .kd");
		return {classes: [...new Set(spans.map(s => s.className))], styled: document.querySelectorAll("[style]").length,
			same: !k || getComputedStyle(k).color === getComputedStyle(document.querySelector("pre.code")).color};
	})()`, &kw), shot("10-highlighted"))
	if len(kw.Classes) < 3 || kw.Same || kw.Styled != 0 {
		t.Errorf("highlighted file: token classes %v, keyword coloured: %v, elements with a style attribute: %d", kw.Classes, !kw.Same, kw.Styled)
	}

	// The diff between two versions, through the version picker (a GET form).
	run("compare", chromedp.Navigate(srv.URL+"/-/r/@main/quality/eslint"), chromedp.Click("#compare-link", chromedp.ByQuery),
		chromedp.WaitVisible("#diff-title", chromedp.ByQuery),
		chromedp.SetValue("#from", "1.1.0", chromedp.ByQuery), chromedp.SetValue("#to", "1.2.0", chromedp.ByQuery),
		chromedp.Submit("#from", chromedp.ByQuery), chromedp.WaitVisible("pre.diff", chromedp.ByQuery), shot("11-diff"))
	run("diff location", chromedp.Location(&loc))
	if !strings.HasSuffix(loc, "/-/diff/@main/quality/eslint?from=1.1.0&to=1.2.0") {
		t.Errorf("the picker's URL: got %s", loc)
	}
	var added, removed []string
	run("diff lines", chromedp.Evaluate(`[...document.querySelectorAll("pre.diff .add")].map(e => e.textContent)`, &added),
		chromedp.Evaluate(`[...document.querySelectorAll("pre.diff .del")].map(e => e.textContent)`, &removed))
	if !slices.Contains(added, "+import tseslint from \"typescript-eslint\";") || !slices.Contains(removed, "-export default [js.configs.recommended];") {
		t.Errorf("diff 1.1.0 → 1.2.0: added %q, removed %q", added, removed)
	}
	if log := text("#changes-h ~ .changelog"); !strings.Contains(log, "typescript-eslint") {
		t.Errorf("diff page changelog: got %q", log)
	}

	// Sign in: the gated namespace appears; the cookie is out of scripts' reach.
	run("sign in", chromedp.Navigate(srv.URL+"/-/signin"), chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", teamToken, chromedp.ByQuery), chromedp.Submit("#token", chromedp.ByQuery),
		chromedp.WaitVisible("#signed-in", chromedp.ByQuery), chromedp.WaitVisible("#namespaces", chromedp.ByQuery), shot("6-signed-in"))
	if ns := text("#namespaces"); !strings.Contains(ns, "@team") {
		t.Errorf("signed in: got namespaces %q, want @team", ns)
	}
	var cookies string
	run("document.cookie", chromedp.Evaluate(`document.cookie`, &cookies))
	if strings.Contains(cookies, "jig_token") || strings.Contains(cookies, teamToken) {
		t.Errorf("scripts can read the token cookie: %q", cookies)
	}
	run("gated search", chromedp.Navigate(srv.URL+"/-/search?q=secret"),
		chromedp.WaitVisible(`#results a[href="/-/r/@team/tools/secret-lint"]`, chromedp.ByQuery))

	// Sign out: gone again.
	run("sign out", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#signed-in", chromedp.ByQuery),
		chromedp.Click(`form[action="/-/signout"] button`, chromedp.ByQuery),
		chromedp.WaitVisible("#signin-link", chromedp.ByQuery), chromedp.WaitVisible("#namespaces", chromedp.ByQuery), shot("7-signed-out"))
	if ns := text("#namespaces"); strings.Contains(ns, "@team") {
		t.Errorf("signed out: got namespaces %q, want no @team", ns)
	}
	run("gated page after sign-out", chromedp.Navigate(srv.URL+"/-/r/@team/tools/secret-lint"), chromedp.WaitVisible("h1", chromedp.ByQuery))
	if h := text("h1"); h != "Not found" {
		t.Errorf("gated page after sign-out: got %q", h)
	}
	run("presets", chromedp.Navigate(srv.URL+"/-/presets"), chromedp.WaitVisible("#preset-node-library", chromedp.ByQuery), shot("8-presets"))

	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported problems (CSP violations, script errors):\n%s", strings.Join(p, "\n"))
	}
}

// TestBrowserAdoptionChart loads a registry page whose census has 60 days
// of history (six versions, each taking over from the last, a week the
// server recorded nothing) in a real browser, light and dark: the chart
// is there, drawn at a readable size, under the page's CSP (no
// violations), with its text. Screenshots go to
// $JIG_TEST_ARTIFACTS/TestBrowserAdoptionChart.
func TestBrowserAdoptionChart(t *testing.T) {
	now := time.Date(2026, 4, 4, 12, 0, 0, 0, time.UTC)
	objects := map[string]string{"@main/tools/lint/versions.json": `{"versions":["1.5.0","1.4.0","1.3.0","1.2.0","1.1.0","1.0.0"]}`}
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0"} {
		objects["@main/tools/lint/"+v+"/registry.json"] = fmt.Sprintf(`{"name":"lint","namespace":"@main","path":"tools/lint","version":%q,"type":"registry:quality","priority":6,"description":"Lint rules."}`, v)
	}
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// 80 projects; version k is published on day 10k and each project
	// moves to it some days later.
	const days, projects = 60, 80
	for d := range days {
		for p := range projects {
			v := 0
			for v < 5 && d >= 10*(v+1)+p%9 {
				v++
			}
			if p > 70 { // a few projects stay behind
				v = min(v, 1)
			}
			err := db.PutReport(t.Context(), &state.Report{Namespace: "@main", Reporter: "ci", At: now.Add(-time.Hour),
				CensusReport: wire.CensusReport{Project: fmt.Sprintf("https://git.example/p%02d.git", p),
					Registries: []wire.CensusEntry{{Path: "tools/lint", Version: fmt.Sprintf("1.%d.0", v), State: wire.CensusClean}}}}, state.Limits{})
			if err != nil {
				t.Fatal(err)
			}
		}
		if d >= 30 && d < 37 {
			continue // the server was down
		}
		day := now.AddDate(0, 0, d-days)
		if err := db.Snapshot(t.Context(), day); err != nil {
			t.Fatal(err)
		}
	}
	srv := serveCatalog(t, registryserver.WithStorage(testenv.MemoryStorage(t, objects)),
		registryserver.WithState(db), registryserver.WithClock(func() time.Time { return now }))

	ctx, problems := browser(t)
	dir := testenv.Artifacts(t)
	shot := func(name string) chromedp.Action { return screenshot(dir, name, "") }
	section := func(name string) chromedp.Action { return screenshot(dir, name, `section[aria-labelledby="inuse-h"]`) }
	var got struct {
		Width, Height float64
		Areas         int
		Filled        bool
		Title         string
		Behind        string
		Legend        []string
		Styled        int
	}
	read := chromedp.Evaluate(`(() => {
		const svg = document.querySelector("svg#adoption");
		if (!svg) return {};
		const r = svg.getBoundingClientRect();
		const latest = svg.querySelector(".series.latest path");
		return {width: r.width, height: r.height, areas: svg.querySelectorAll(".series path").length,
			filled: !!latest && getComputedStyle(latest).fill !== getComputedStyle(svg.querySelector(".series.so path, .series.s1 path")).fill,
			title: svg.querySelector("title").textContent, behind: document.querySelector("#behind").textContent,
			legend: [...document.querySelectorAll("#adoption-legend li")].map(li => li.textContent),
			styled: document.querySelectorAll("[style]").length};
	})()`, &got)
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/-/r/@main/tools/lint"), chromedp.WaitVisible("svg#adoption", chromedp.ByQuery),
		chromedp.ScrollIntoView("svg#adoption", chromedp.ByQuery), read, shot("1-registry"), section("2-in-use")); err != nil {
		t.Fatal(err)
	}
	if got.Width < 500 || got.Height < 150 || got.Areas < 6 || !got.Filled || got.Styled != 0 {
		t.Errorf("the chart: %+v; want at least 500x150 px, an area per version (one per run of days), the latest coloured apart, no style attributes", got)
	}
	if got.Title != "Projects per version of @main/tools/lint" || !strings.Contains(got.Behind, "behind the latest version, 1.5.0") ||
		len(got.Legend) != 6 || got.Legend[0] != "1.5.0 (latest): 71 now" || got.Behind != "9 projects of 80 are behind the latest version, 1.5.0 (71 on it)." {
		t.Errorf("the chart's text: %+v", got)
	}
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}).Do(ctx)
	}), chromedp.ScrollIntoView("svg#adoption", chromedp.ByQuery), section("3-in-use-dark"),
		chromedp.Click("details.chart-table summary", chromedp.ByQuery), chromedp.WaitVisible("details.chart-table table", chromedp.ByQuery), section("4-in-use-table")); err != nil {
		t.Fatal(err)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported problems (CSP violations, script errors):\n%s", strings.Join(p, "\n"))
	}
}

// TestBrowserStacks shows, in a real browser, what the catalog offers a
// Go service template: a Go file highlighted with numbered lines, a raw
// link and a copy button (the numbers stay out of what is copied); the
// registry page with jig init -t beside jig add and its Markdown
// changelog rendered; the compare page showing a migration's rename as a
// rename with its diff. Screenshots (1-go-file, 2-changelog,
// 3-rename-diff) go to $JIG_TEST_ARTIFACTS/TestBrowserStacks.
func TestBrowserStacks(t *testing.T) {
	mainGo := func(v string) string {
		return "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n// main serves version " + v + ".\nfunc main() {\n\thttp.HandleFunc(\"/\", func(w http.ResponseWriter, _ *http.Request) {\n\t\tfmt.Fprintln(w, \"ok\")\n\t})\n\t_ = http.ListenAndServe(\":8080\", nil)\n}\n"
	}
	changelog := "### Changed\n\n- `main.go` moved to `cmd/svc/main.go`: your edits move with it.\n- The handler answers `ok`.\n\n```sh\ngo run ./cmd/svc\n```\n\n### Added\n\n- A **Dockerfile** on distroless."
	st := testenv.MemoryStorage(t, map[string]string{
		"@main/frameworks/go-service/versions.json": `{"versions":["2.0.0","1.0.0"]}`,
		"@main/frameworks/go-service/1.0.0/registry.json": `{"name":"go-service","namespace":"@main","version":"1.0.0","type":"registry:framework","priority":2,"description":"A Go HTTP service.",` +
			`"files":[{"target":"main.go","type":"registry:entry","path":"templates/main.go"}]}`,
		"@main/frameworks/go-service/1.0.0/templates/main.go": mainGo("1.0.0"),
		"@main/frameworks/go-service/2.0.0/registry.json": fmt.Sprintf(`{"name":"go-service","namespace":"@main","version":"2.0.0","type":"registry:framework","priority":2,"description":"A Go HTTP service.","changelog":%q,`+
			`"files":[{"target":"cmd/svc/main.go","type":"registry:entry","path":"templates/cmd/svc/main.go"}],`+
			`"migrations":[{"version":"2.0.0","steps":[{"type":"rename","from":"main.go","to":"cmd/svc/main.go"}]}]}`, changelog),
		"@main/frameworks/go-service/2.0.0/templates/cmd/svc/main.go": mainGo("2.0.0"),
	})
	srv := serveCatalog(t, registryserver.WithStorage(st))

	ctx, problems := browser(t)
	dir := testenv.Artifacts(t)
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	// The Go file: highlighted, numbered (by CSS: not in the text), a raw
	// link that serves the bytes as text/plain, a copy button.
	var file struct {
		Lines, Keywords int
		Number, Text    string
		CopyShown       bool
		RawType, Raw    string
	}
	run("go file", chromedp.Navigate(srv.URL+"/-/r/@main/frameworks/go-service/2.0.0/files/templates/cmd/svc/main.go"),
		chromedp.WaitVisible("pre.code.chroma", chromedp.ByQuery), screenshot(dir, "1-go-file", ""),
		chromedp.Evaluate(`(async () => {
			const lines = document.querySelectorAll("#file-text .src-line");
			const raw = await fetch(document.getElementById("raw-link").href);
			return {lines: lines.length, keywords: document.querySelectorAll("#file-text .kd, #file-text .kn").length,
				number: getComputedStyle(lines[8], "::before").content, text: document.getElementById("file-text").textContent,
				copyShown: !document.getElementById("copy-file").hidden, rawType: raw.headers.get("content-type"), raw: await raw.text()};
		})()`, &file, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	want := mainGo("2.0.0")
	if file.Lines != strings.Count(want, "\n") || file.Keywords < 3 || file.Number != "counter(line)" || file.Text != want || !file.CopyShown {
		t.Errorf("Go file page: %d lines (want %d), %d keywords, line 9 numbered by %s, text equal: %v, copy button shown: %v",
			file.Lines, strings.Count(want, "\n"), file.Keywords, file.Number, file.Text == want, file.CopyShown)
	}
	if file.RawType != "text/plain; charset=utf-8" || file.Raw != want {
		t.Errorf("raw link: got %q and %d bytes, want text/plain and the file", file.RawType, len(file.Raw))
	}

	// The registry page: init beside add, the changelog rendered.
	var reg struct {
		Init, Add string
		Headings  []string
		Code      string
	}
	run("registry page", chromedp.Navigate(srv.URL+"/-/r/@main/frameworks/go-service"), chromedp.WaitVisible("#changelog", chromedp.ByQuery),
		chromedp.Evaluate(`({init: document.getElementById("cmd-init").value, add: document.getElementById("cmd-add").value,
			headings: [...document.querySelectorAll("#changelog h5")].map(h => h.textContent),
			code: (document.querySelector("#changelog pre code") || {}).textContent})`, &reg),
		chromedp.ScrollIntoView("#changes-h", chromedp.ByQuery), screenshot(dir, "2-changelog", `section[aria-labelledby="changes-h"]`),
		screenshot(dir, "2-registry", ""))
	if reg.Init != "jig init -t @main/frameworks/go-service" || reg.Add != "jig add @main/frameworks/go-service" ||
		!slices.Equal(reg.Headings, []string{"Changed", "Added"}) || reg.Code != "go run ./cmd/svc\n" {
		t.Errorf("registry page: %+v", reg)
	}

	// The compare page: one entry for the rename, with git's lines.
	var renames []string
	run("compare", chromedp.Navigate(srv.URL+"/-/diff/@main/frameworks/go-service?from=1.0.0&to=2.0.0"), chromedp.WaitVisible("pre.diff", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("pre.diff .rename, .diff-file h3")].map(e => e.textContent)`, &renames),
		screenshot(dir, "3-rename-diff", ""))
	if !slices.Equal(renames, []string{"main.go → cmd/svc/main.go renamed", "rename from main.go", "rename to cmd/svc/main.go"}) {
		t.Errorf("compare page: got %q", renames)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported problems (CSP violations, script errors):\n%s", strings.Join(p, "\n"))
	}
	t.Logf("screenshots: %s", strings.Join([]string{filepath.Join(dir, "1-go-file.png"), filepath.Join(dir, "2-changelog.png"), filepath.Join(dir, "3-rename-diff.png")}, ", "))
}
