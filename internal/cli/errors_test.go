package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/rcfile"
)

func TestPrintError(t *testing.T) {
	t.Parallel()
	url := "http://r.example/registries/@team/tools/lint"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "401", err: fmt.Errorf("resolving: %w", &registryclient.StatusError{StatusCode: 401, Code: "UNAUTHORIZED", Message: "Authentication token is required", Registry: "@team/tools/lint", URL: url}),
			want: "Error: 401 Unauthorized\nFailed to fetch registry @team/tools/lint (" + url + "): Authentication token is required\nSet a valid token with 'jig config set @team --token <token>'.\n"},
		{name: "403", err: &registryclient.StatusError{StatusCode: 403, Code: "FORBIDDEN_NAMESPACE", Message: "Namespace not allowed", Registry: "@secret", URL: "http://r.example/namespaces/@secret/registries"},
			want: "Error: 403 Forbidden\nAccess denied to registry @secret (http://r.example/namespaces/@secret/registries): Namespace not allowed\n"},
		{name: "404", err: &registryclient.StatusError{StatusCode: 404, Code: "NOT_FOUND", Message: "Resource not found", Registry: "@main/x", URL: "http://r.example/registries/@main/x"},
			want: "Error: 404 Not Found\nNot found: registry @main/x (http://r.example/registries/@main/x): Resource not found\n"},
		{name: "500", err: &registryclient.StatusError{StatusCode: 500, URL: "http://r.example/namespaces"},
			want: "Error: 500 Internal Server Error\nFailed to fetch http://r.example/namespaces\nRun 'jig doctor' to check the registry's health.\n"},
		{name: "429", err: &registryclient.RateLimitError{RetryAfter: time.Minute, Err: &registryclient.StatusError{StatusCode: 429, Registry: "@main", URL: "http://r.example/namespaces"}},
			want: "Error: 429 Too Many Requests\nRate limited while fetching registry @main (http://r.example/namespaces); try again in 1m0s.\n"},
		{name: "network", err: &registryclient.NetworkError{Method: "GET", URL: "http://127.0.0.1:1/namespaces", Err: errors.New("connection refused")},
			want: "Error: could not reach http://127.0.0.1:1/namespaces: connection refused\nRun 'jig doctor' to check your registry configuration and connectivity.\n"},
		{name: "other", err: errors.New("boom"), want: "Error: boom\n"},
		{name: "not configured", err: fmt.Errorf("listing: %w", &registryclient.NotConfiguredError{Namespace: "@nope"}),
			want: "Error: listing: No registry configured for namespace @nope. Run 'jig config set @nope --url <url>' first.\n"},
		{name: "not configured, no source names it its default", err: fmt.Errorf("fetching: %w", &registryclient.NotConfiguredError{Namespace: "@rack", DefaultsAsked: true}),
			want: "Error: fetching: No registry configured for namespace @rack. Run 'jig config set @rack --url <url>' first, or, if @rack is the default namespace of your registry server, start jig-server with --default-namespace rack or run 'jig config set @presets --default-namespace @rack'.\n"},
		{name: "env token", err: &rcfile.EnvNotSetError{Namespace: "@team", Var: "TEAM_TOKEN", Field: "token"},
			want: "Error: invalid registry configuration: registry @team: environment variable TEAM_TOKEN used in its token is not set\nExport TEAM_TOKEN, or store the value with 'jig config set @team --token <token>'.\n"},
		{name: "env header", err: &rcfile.EnvNotSetError{Namespace: "@team", Var: "KEY", Field: "header X-Key"},
			want: "Error: invalid registry configuration: registry @team: environment variable KEY used in its header X-Key is not set\nExport KEY, or store the value with 'jig config set @team --header \"X-Key: <value>\"'.\n"},
		{name: "no url", err: &registryclient.MissingURLError{Namespace: "@team"},
			want: "Error: invalid registry configuration: registry @team has no url\nSet it with 'jig config set @team --url <url>'.\n"},
		// Library errors carry data; the hints naming commands are the CLI's.
		{name: "presets not listed", err: fmt.Errorf("listing: %w", &registryclient.NotSupportedError{URL: "http://r.example", Route: "/presets", Action: "list presets"}),
			want: "Error: listing: http://r.example cannot list presets: not supported by this server; fetch one by name with 'jig init -t @presets/<name>'\n"},
		{name: "other route not supported", err: &registryclient.NotSupportedError{URL: "http://r.example", Route: "/search", Action: "search"},
			want: "Error: http://r.example cannot search: not supported by this server\n"},
		{name: "preset in add", err: &apply.PresetNotAddableError{Template: "presets/node", Preset: "@presets/node"},
			want: "Error: presets cannot be added to a project: presets/node is a preset; use 'jig init -t @presets/node' or add its registries one by one\n"},
		{name: "not installed", err: &apply.NotInstalledError{Registry: "@main/quality/eslint", Typed: "quality/eslint"},
			want: "Error: registry is not installed: @main/quality/eslint is not installed in this project; add it with 'jig add quality/eslint'\n"},
		{name: "no project", err: &apply.NoProjectError{Dir: "/p"},
			want: "Error: no jig.json in the project directory /p; run 'jig init' or 'jig add' first\n"},
		{name: "not cached", err: fmt.Errorf("resolving: %w", &registryclient.NotCachedError{What: "preset @presets/node from http://r.example"}),
			want: "Error: resolving: not in the cache: preset @presets/node from http://r.example; run the command once without --offline\n"},
		{name: "not published", err: &registryclient.NotCachedError{What: "@main/x@1.0.0 file a.txt from http://r.example (not in the version's digest index)", Unpublished: true},
			want: "Error: not in the cache: @main/x@1.0.0 file a.txt from http://r.example (not in the version's digest index)\n"},
		{name: "not recorded", err: fmt.Errorf("resolving @main/a: %w", &apply.NotRecordedError{Registry: "@main/b"}),
			want: "Error: resolving @main/a: frozen install failed: @main/b is not recorded in jig.json (a registry dependency added since?); run without --frozen to update the project\n"},
		{name: "not witnessed", err: fmt.Errorf("fetching registry @team/x@1.3.0: %w", &registryclient.LogError{Version: "@team/x@1.3.0", Server: "http://r.example",
			Problem: "@team/x@1.3.0 is in the log at index 41, but the newest tree head 2 witnesses cosigned has 41 records",
			Err:     &registryclient.NotWitnessedError{Namespace: "@team", Min: 2}}),
			want: "Error: fetching registry @team/x@1.3.0: refusing @team/x@1.3.0 from http://r.example: @team/x@1.3.0 is in the log at index 41, but the newest tree head 2 witnesses cosigned has 41 records. Nothing was written; each witness runs 'jig log witness cosign @team' (from a scheduled job); the versions of the tree head they cosigned last install meanwhile\n"},
		{name: "other version", err: &apply.OtherVersionError{Key: "@team/x", Installed: "1.0.0", Requested: "1.1.0"},
			want: "Error: registry @team/x is installed at version 1.0.0, not 1.1.0; run 'jig update @team/x --to 1.1.0' to move it (your edits are merged, not overwritten)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			printError(&b, newOutput(&b, &b, false, false), reportFor(tt.err, 0, false))
			if got := b.String(); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestErrorJSON(t *testing.T) {
	t.Parallel()
	url := "http://r.example/registries/@team/tools/lint"
	tests := []struct {
		name    string
		err     error
		aborted bool
		want    string
	}{
		{name: "401", err: &registryclient.StatusError{StatusCode: 401, Code: "UNAUTHORIZED", Message: "Authentication token is required", Registry: "@team/tools/lint", URL: url},
			want: `{"error":{"code":"UNAUTHORIZED","message":"Failed to fetch registry @team/tools/lint (` + url + `): Authentication token is required","hint":"Set a valid token with 'jig config set @team --token <token>'.","status":401}}`},
		{name: "no code from the server", err: &registryclient.StatusError{StatusCode: 502, URL: "http://r.example/namespaces"},
			want: `{"error":{"code":"BAD_GATEWAY","message":"Failed to fetch http://r.example/namespaces","hint":"Run 'jig doctor' to check the registry's health.","status":502}}`},
		{name: "network", err: &registryclient.NetworkError{Method: "GET", URL: "http://127.0.0.1:1/namespaces", Err: errors.New("connection refused")},
			want: `{"error":{"code":"NETWORK_ERROR","message":"could not reach http://127.0.0.1:1/namespaces: connection refused","hint":"Run 'jig doctor' to check your registry configuration and connectivity."}}`},
		{name: "deadline", err: fmt.Errorf("GET x: %w", registryclient.ErrDeadline),
			want: `{"error":{"code":"TIMEOUT","message":"gave up after 2m0s: GET x: ` + registryclient.ErrDeadline.Error() + `","hint":"The registry server is too slow or stalled. Allow more time with --timeout (e.g. --timeout 10m) or JIG_TIMEOUT, or run 'jig doctor'."}}`},
		{name: "aborted", err: ErrAborted, aborted: true, want: `{"error":{"code":"ABORTED","message":"Operation cancelled"}}`},
		{name: "other", err: errors.New("boom"), want: `{"error":{"code":"ERROR","message":"boom"}}`},
		{name: "hint of a library error", err: &apply.NotInstalledError{Registry: "@main/x", Typed: "x"},
			want: `{"error":{"code":"ERROR","message":"registry is not installed: @main/x is not installed in this project","hint":"add it with 'jig add x'"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			printErrorJSON(&b, reportFor(tt.err, 2*time.Minute, tt.aborted))
			var compact bytes.Buffer
			if err := json.Compact(&compact, b.Bytes()); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, b.String())
			}
			if got := compact.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestShorthandHint: a registry named in shorthand that jig read as @main
// and the server does not have (404) or hides (403) gets a hint naming
// both settings; other failures keep their own hints.
func TestShorthandHint(t *testing.T) {
	t.Parallel()
	short := func(from, ns string, status int) error {
		id := registry.MustParseID("runtimes/node")
		id.Namespace = ns
		return fmt.Errorf("fetching registry %s: %w", id, &apply.ShorthandError{Written: "runtimes/node", ID: id, From: from,
			Err: &registryclient.StatusError{StatusCode: status, Registry: id.String(), URL: "http://r.example/registries/" + id.Key()}})
	}
	for _, tc := range []struct {
		name string
		err  error
		want string // the hint; "" for "not the shorthand hint"
	}{
		{"preset member 404", short("@presets", "@main", 404),
			"The preset member runtimes/node is shorthand, which jig reads as @main/runtimes/node. If the server keeps it in another namespace (a storage written for the reference uses @rack), start jig-server with --default-namespace <namespace> (e.g. --default-namespace rack), or run 'jig config set @presets --default-namespace <namespace>'."},
		{"typed 403", short("@main", "@main", 403),
			"The identifier runtimes/node is shorthand, which jig reads as @main/runtimes/node. If the server keeps it in another namespace (a storage written for the reference uses @rack), start jig-server with --default-namespace <namespace> (e.g. --default-namespace rack), or run 'jig config set @main --default-namespace <namespace>'."},
		{"dependency 404", short("@team", "@main", 404),
			"The dependency runtimes/node of a registry in @team is shorthand, which jig reads as @main/runtimes/node. If the server keeps it in another namespace (a storage written for the reference uses @rack), start jig-server with --default-namespace <namespace> (e.g. --default-namespace rack), or run 'jig config set @team --default-namespace <namespace>'."},
		{"already another namespace", short("@presets", "@rack", 404), ""},
		{"401 keeps the token hint", short("@presets", "@main", 401), ""},
		{"500", short("@presets", "@main", 500), ""},
		{"not shorthand", &registryclient.StatusError{StatusCode: 404, Registry: "@main/runtimes/node"}, ""},
	} {
		r := reportFor(tc.err, 0, false)
		if tc.want == "" {
			if r.Hint != "" && r.Hint == shorthandHint(tc.err) {
				t.Errorf("%s: got the shorthand hint %q, want none", tc.name, r.Hint)
			}
			if shorthandHint(tc.err) != "" {
				t.Errorf("%s: shorthandHint = %q, want none", tc.name, shorthandHint(tc.err))
			}
			continue
		}
		if r.Hint != tc.want {
			t.Errorf("%s: hint\n%s\nwant\n%s", tc.name, r.Hint, tc.want)
		}
	}
}
