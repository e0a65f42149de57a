// Package interop runs the same scaffolding steps with jig and with the
// reference CLI (rk), each against a jig-server, and snapshots the project
// trees they leave; it also asks a server a fixed list of requests and
// records the answers. scripts/interop/record.sh records the reference's
// trees and its server's answers as golden files under testdata/interop;
// the tests in cmd/jig run jig the same way and compare byte for byte.
//
// Everything here is test tooling: the cases and the stores they run
// against are this project's own content, never the reference's.
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryclient"
)

// Case is one scenario: steps run in an empty work directory against a
// server that serves Store.
type Case struct {
	// Name names the case and its golden file, golden/<name>.json.
	Name string `json:"name"`
	// About says what the case shows (the issue item it checks).
	About string `json:"about"`
	// Store is a directory under stores/ served by jig-server, or "" for
	// the starter catalog jig-server seeds into an empty storage.
	Store string `json:"store,omitempty"`
	// Steps run in order; a failing step fails the case.
	Steps []Step `json:"steps"`
	// Tree is the directory, relative to the work directory, whose files
	// are recorded and compared.
	Tree string `json:"tree"`
	// Differs names files of Tree where jig deliberately differs from the
	// reference in bytes, with why; they are compared as JSON values.
	Differs map[string]string `json:"differs,omitempty"`
	// Registries are the namespaces the rc file points at the server
	// before the steps; nil means [Namespaces].
	Registries []string `json:"registries,omitempty"`
}

// Step is one action of a [Case]: exactly one of Init, Add, Write and
// Jig.
type Step struct {
	// Dir is where the step runs, relative to the work directory.
	Dir string `json:"dir,omitempty"`
	// Init is a template for "init -t <Init> -n <Name> --ci".
	Init string `json:"init,omitempty"`
	Name string `json:"name,omitempty"`
	// Add is a registry for "add <Add>".
	Add string `json:"add,omitempty"`
	// Write writes files (path relative to Dir: content), as a user's
	// edits between commands.
	Write map[string]string `json:"write,omitempty"`
	// Jig runs jig with these arguments whichever tool runs the case, on
	// the rc file that tool reads (JIG_CONFIG), with JIG_REGISTRY_URL the
	// server's URL: a file jig writes and the reference reads. The rc
	// file is then recorded ([Tree.RC]).
	Jig []string `json:"jig,omitempty"`
}

// Suite is testdata/interop/cases.json.
type Suite struct {
	Cases []Case `json:"cases"`
	// Requests are asked of a server serving the storage jig writes (see
	// [WriteStorage]); their answers are recorded in server.json. A
	// request is "METHOD /path", or "METHOD /path <body>" to send one of
	// Bodies.
	Requests []string `json:"requests"`
	// Bodies are what requests send, by name.
	Bodies map[string]Body `json:"bodies,omitempty"`
	// RefAuth are requests asked of the reference server alone, on a
	// store of the suite served with an auth.json of its own; their
	// answers (refauth.json) are replayed to jig in tests.
	RefAuth *ServerCase `json:"refAuth,omitempty"`
	// ServerDiffers names requests where jig-server deliberately answers
	// differently from the reference server, with why. For them only the
	// status, and the error code of an error body, must match.
	ServerDiffers map[string]string `json:"serverDiffers,omitempty"`
	// ServerDeviates names requests where jig-server deliberately answers
	// with another status than the reference server (each listed in the
	// the table of differences in docs/http-api.md), with jig-server's answer.
	ServerDeviates map[string]Deviation `json:"serverDeviates,omitempty"`
}

// Deviation is jig-server's answer to a request where it deliberately
// differs from the reference server, and why.
type Deviation struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Why    string `json:"why"`
}

// Body is what a request of the suite sends: a registry package as jig
// publish sends it, or a raw body.
type Body struct {
	About string `json:"about"`
	// Package is a registry directory of the suite (relative to it), sent
	// as a multipart form with its archive and checksum.
	Package string `json:"package,omitempty"`
	// ContentType and Text are a raw body, when Package is "".
	ContentType string `json:"contentType,omitempty"`
	Text        string `json:"text,omitempty"`
	// Admin sends the servers' admin token ([AdminToken]).
	Admin bool `json:"admin,omitempty"`
}

// ServerCase is a set of requests asked of a server serving Store with
// Auth as its auth.json.
type ServerCase struct {
	About    string   `json:"about"`
	Store    string   `json:"store"`
	Auth     string   `json:"auth"`
	Requests []string `json:"requests"`
}

// Load reads the suite in dir (testdata/interop).
func Load(dir string) (*Suite, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var s Suite
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("cases.json: %w", err)
	}
	return &s, nil
}

// Tool is how to run one of the two CLIs.
type Tool struct {
	// Name is "rk" or "jig".
	Name string
	// Command is the program and the arguments before the subcommand
	// (e.g. node /path/to/bin.js).
	Command []string
	// Jig is the jig binary that runs a case's [Step.Jig] steps.
	Jig string
}

// IsRef reports whether t is the reference CLI.
func (t Tool) IsRef() bool { return t.Name == "rk" }

// rcFile is where t reads its configuration in home.
func (t Tool) rcFile(home string) string {
	if t.IsRef() {
		return filepath.Join(home, ".rackrc")
	}
	return filepath.Join(home, ".jigrc")
}

// ProjectFile is the project file t writes.
func (t Tool) ProjectFile() string {
	if t.IsRef() {
		return "rack.json"
	}
	return "jig.json"
}

// args returns the command line of s.
func (t Tool) args(s Step) ([]string, error) {
	var a []string
	switch {
	case s.Init != "" && s.Add == "" && s.Write == nil && s.Jig == nil:
		a = []string{"init", "-t", s.Init, "-n", s.Name, "--ci"}
	case s.Add != "" && s.Init == "" && s.Write == nil && s.Jig == nil:
		a = []string{"add", s.Add}
		if !t.IsRef() {
			// rk add never installs packages.
			a = append(a, "--skip-install")
		}
	default:
		return nil, errors.New("a step is exactly one of init, add, write and jig")
	}
	return append(slices.Clone(t.Command), a...), nil
}

// Namespaces are the namespaces the rc files point at the server.
var Namespaces = []string{"@main", "@presets", "@interop"}

// Run runs c's steps with t in work (an empty directory) against the
// server at url, with home as HOME, and returns the snapshot of c.Tree.
func (c Case) Run(ctx context.Context, t Tool, url, work, home string) (*Tree, error) {
	regs := map[string]string{}
	nss := c.Registries
	if nss == nil {
		nss = Namespaces
	}
	for _, ns := range nss {
		regs[ns] = url
	}
	rc, err := json.MarshalIndent(map[string]any{"registries": regs}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(t.rcFile(home), rc, 0o600); err != nil {
		return nil, err
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "TZ=UTC",
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	ranJig := false
	for i, s := range c.Steps {
		dir := filepath.Join(work, filepath.FromSlash(s.Dir))
		if s.Jig != nil {
			if s.Init != "" || s.Add != "" || s.Write != nil {
				return nil, fmt.Errorf("case %s, step %d: a step is exactly one of init, add, write and jig", c.Name, i+1)
			}
			cmd := exec.CommandContext(ctx, t.Jig, s.Jig...)
			cmd.Dir = dir
			cmd.Env = append(slices.Clone(env), "JIG_CONFIG="+t.rcFile(home), "JIG_REGISTRY_URL="+url)
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("case %s, step %d (jig %s): %w\n%s", c.Name, i+1, strings.Join(s.Jig, " "), err, out)
			}
			ranJig = true
			continue
		}
		if s.Write != nil {
			for _, p := range slices.Sorted(maps.Keys(s.Write)) {
				fp := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
					return nil, err
				}
				if err := os.WriteFile(fp, []byte(s.Write[p]), 0o644); err != nil {
					return nil, err
				}
			}
			continue
		}
		args, err := t.args(s)
		if err != nil {
			return nil, fmt.Errorf("case %s, step %d: %w", c.Name, i+1, err)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("case %s, step %d (%s): %w\n%s", c.Name, i+1, strings.Join(args[len(t.Command):], " "), err, out.String())
		}
	}
	tree, err := Snapshot(filepath.Join(work, filepath.FromSlash(c.Tree)))
	if err != nil || !ranJig {
		return tree, err
	}
	b, err := os.ReadFile(t.rcFile(home))
	if err != nil {
		return nil, err
	}
	tree.RC = strings.ReplaceAll(string(b), url, ServerURL)
	return tree, nil
}

// ServerURL stands for the server's URL in a recorded rc file.
const ServerURL = "$SERVER_URL"

// Tree is the recorded state of a project directory.
type Tree struct {
	// Files maps a slash path to the file's content, except the project
	// files (jig.json, rack.json) and what .git and node_modules hold.
	Files map[string]string `json:"files"`
	// Executable lists the files with an execute bit, sorted.
	Executable []string `json:"executable,omitempty"`
	// Project is the project file at the root: jig.json, else rack.json;
	// "" when there is none.
	Project string `json:"project,omitempty"`
	// RC is the rc file after a case with [Step.Jig] steps, the server's
	// URL written as [ServerURL]: what jig wrote and the reference then
	// read.
	RC string `json:"rc,omitempty"`
}

// Snapshot reads the tree at dir.
func Snapshot(dir string) (*Tree, error) {
	t := &Tree{Files: map[string]string{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", rel)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "jig.json" || rel == "rack.json" {
			if rel == "jig.json" || t.Project == "" {
				// jig.json wins: jig adopt keeps rack.json.
				t.Project = string(b)
			}
			return nil
		}
		t.Files[rel] = string(b)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o111 != 0 {
			t.Executable = append(t.Executable, rel)
		}
		return nil
	})
	slices.Sort(t.Executable)
	return t, err
}

// Golden is a golden file: golden/<case>.json.
type Golden struct {
	Case string `json:"case"`
	Tree
}

// ReadGolden reads the golden file of case name in dir.
func ReadGolden(dir, name string) (*Golden, error) {
	b, err := os.ReadFile(filepath.Join(dir, "golden", name+".json"))
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("golden/%s.json: %w", name, err)
	}
	return &g, nil
}

// WriteJSON writes v as indented JSON with a trailing newline, HTML
// characters unescaped.
func WriteJSON(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// CopyStore copies stores/<name> of the suite directory dir into dst (a
// new directory). The starter catalog ("") leaves dst empty: jig-server
// seeds it.
func CopyStore(dir, name, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if name == "" {
		return nil
	}
	src := filepath.Join(dir, "stores", name)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// Server is a running registry server.
type Server struct {
	URL  string
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartServer starts args (jig-server, or node with the reference
// server) with env plus PORT and HOST, and waits until /health answers.
func StartServer(ctx context.Context, args []string, dir string, env []string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(env), "PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "PATH="+os.Getenv("PATH"))
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, logs: logs}
	hc := &http.Client{Timeout: time.Second}
	// Startup is waited for, never timed: the loop ends when the server
	// answers, exits, or ctx ends.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		res, err := hc.Get(s.URL + "/health")
		if err == nil {
			res.Body.Close()
			s.cmd = cmd
			go func() { <-exited }()
			return s, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s exited: %v\n%s", args[0], err, logs.String())
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("%s did not answer /health: %w\n%s", args[0], ctx.Err(), logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the server.
func (s *Server) Stop() { _ = s.cmd.Process.Kill() }

// Exchange is one recorded request and its answer.
type Exchange struct {
	Request     string `json:"request"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType,omitempty"`
	Body        string `json:"body"`
}

// Ask sends every request ("GET /path", or "POST /path <body>" with one of
// bodies, whose packages are under the suite directory suite) to the
// server at url and returns the answers.
func Ask(ctx context.Context, url string, requests []string, bodies map[string]Body, suite string) ([]Exchange, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	var out []Exchange
	for _, r := range requests {
		method, rest, ok := strings.Cut(r, " ")
		if !ok {
			return nil, fmt.Errorf("request %q: want \"METHOD /path\"", r)
		}
		path, bodyName, _ := strings.Cut(rest, " ")
		var body io.Reader
		header := http.Header{}
		if bodyName != "" {
			b, ok := bodies[bodyName]
			if !ok {
				return nil, fmt.Errorf("request %q: no body %q in the suite", r, bodyName)
			}
			data, ctype, err := b.encode(suite)
			if err != nil {
				return nil, fmt.Errorf("request %q: %w", r, err)
			}
			body = bytes.NewReader(data)
			header.Set("Content-Type", ctype)
			if b.Admin {
				header.Set("Authorization", "Bearer "+AdminToken)
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, url+path, body)
		if err != nil {
			return nil, err
		}
		maps.Copy(req.Header, header)
		res, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		ct, _, _ := strings.Cut(res.Header.Get("Content-Type"), ";")
		out = append(out, Exchange{Request: r, Status: res.StatusCode, ContentType: ct, Body: string(data)})
	}
	return out, nil
}

// encode returns b's bytes and content type.
func (b Body) encode(suite string) ([]byte, string, error) {
	if b.Package == "" {
		return []byte(b.Text), b.ContentType, nil
	}
	p, err := registryclient.OpenPackage(filepath.Join(suite, filepath.FromSlash(b.Package)))
	if err != nil {
		return nil, "", err
	}
	return p.Form()
}

// newerThanRecording are storage keys of the starter catalog newer than
// the recording of server.json (the go and python services of issue 41).
var newerThanRecording = []string{layout.RegistryDir("@main", "services"), layout.PresetDir("go-service"), layout.PresetDir("python-service")}

// AdminToken is the admin token of the servers [WriteStorage] starts.
const AdminToken = "interop-admin-token"

// AuthJSON is the auth.json the recorded server answers are asked with:
// both namespaces public.
const AuthJSON = "{\n  \"@main\": [],\n  \"@interop\": []\n}\n"

// WriteStorage makes, at dir, the storage jig writes: jig-server
// (jigServer) seeds its starter catalog into the empty directory, jig
// publish adds @interop/features/crlf 1.0.0 and
// @interop/features/pkg-extra 1.0.0 and 1.1.0 from the suite in suite, and
// then the suite's [OperatorSchemaFile] becomes the storage's schema.
// work is a scratch directory. It returns the auth.json to serve dir with.
func WriteStorage(ctx context.Context, suite, jigServer, jig, dir, work string) (string, error) {
	auth := filepath.Join(work, "auth.json")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(auth, []byte(AuthJSON), 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	srv, err := StartServer(ctx, []string{jigServer}, work, []string{"STORAGE_ROOT=" + dir,
		"AUTH_CONFIG_PATH=" + auth, "ADMIN_TOKEN=" + AdminToken, "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + work})
	if err != nil {
		return "", err
	}
	defer srv.Stop()
	// Catalog entries added after server.json was recorded are taken out,
	// so both servers answer for the storage the recording saw; re-record
	// (scripts/interop/record.sh) to include them and empty the list.
	for _, k := range newerThanRecording {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(k))); err != nil {
			return "", err
		}
	}
	home := filepath.Join(work, "publisher")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", err
	}
	rc := fmt.Sprintf(`{"registries": {"@interop": {"url": %q, "token": %q}}}`, srv.URL, AdminToken)
	if err := os.WriteFile(filepath.Join(home, ".jigrc"), []byte(rc), 0o600); err != nil {
		return "", err
	}
	src, err := filepath.Abs(filepath.Join(suite, "stores", "interop", "@interop", "features"))
	if err != nil {
		return "", err
	}
	next := filepath.Join(work, "pkg-extra-1.1.0")
	if err := os.CopyFS(next, os.DirFS(filepath.Join(src, "pkg-extra", "1.0.0"))); err != nil {
		return "", err
	}
	m := filepath.Join(next, layout.ManifestFile)
	b, err := os.ReadFile(m)
	if err != nil {
		return "", err
	}
	b = bytes.Replace(b, []byte(`"version": "1.0.0"`), []byte(`"version": "1.1.0"`), 1)
	if err := os.WriteFile(m, b, 0o644); err != nil {
		return "", err
	}
	for _, d := range []string{filepath.Join(src, "crlf", "1.0.0"), filepath.Join(src, "pkg-extra", "1.0.0"), next} {
		cmd := exec.CommandContext(ctx, jig, "publish", d, "--ci")
		cmd.Dir = work
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("jig publish %s: %w\n%s", d, err, out)
		}
	}
	// Then the operator adds a schema of its own (the reference's default
	// SCHEMA_DIR is <STORAGE_ROOT>/schema).
	b, err = os.ReadFile(filepath.Join(suite, OperatorSchemaFile))
	if err != nil {
		return "", err
	}
	key := filepath.Join(dir, filepath.FromSlash(layout.Schema(registry.ManifestSchemaFile)))
	if err := os.MkdirAll(filepath.Dir(key), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(key, b, 0o644); err != nil {
		return "", err
	}
	return auth, nil
}

// OperatorSchemaFile is the file of the suite that [WriteStorage] puts in
// the storage as its operator's registry-item.json schema, after jig has
// published into it.
const OperatorSchemaFile = "operator-schema.json"
