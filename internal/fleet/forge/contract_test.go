package forge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// A contract is a recorded conversation with a forge's API: a txtar file
// of "NN request" and "NN response" sections, in order. A request
// section is the request line ("POST /api/v3/repos/acme/app/pulls", with
// the query when one is sent), the headers that must be sent, a blank
// line and the JSON body (compared as JSON; none means none is sent). A
// response section is the status, the headers, a blank line and the body,
// sent as written.
type exchange struct {
	name string
	// The request.
	method, path string
	query        url.Values // nil: no query
	headers      http.Header
	body         []byte
	// The response.
	status      int
	respHeaders http.Header
	respBody    []byte
}

// loadContract reads testdata/<name>.txt.
func loadContract(t *testing.T, name string) []exchange {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	for i := 0; i < len(a.Files); i += 2 {
		req, resp := a.Files[i], txtar.File{}
		if i+1 < len(a.Files) {
			resp = a.Files[i+1]
		}
		n, ok := strings.CutSuffix(req.Name, " request")
		if !ok || resp.Name != n+" response" {
			t.Fatalf("%s: section %q must be followed by %q", name, req.Name, n+" response")
		}
		e := exchange{name: name + " #" + n}
		line, headers, body := parseMessage(t, e.name, req.Data)
		method, target, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("%s: request line %q: want METHOD /path", e.name, line)
		}
		u, err := url.Parse(target)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		e.method, e.path, e.headers, e.body = method, u.Path, headers, body
		if u.RawQuery != "" {
			e.query = u.Query()
		}
		line, e.respHeaders, e.respBody = parseMessage(t, e.name, resp.Data)
		if e.status, err = strconv.Atoi(line); err != nil {
			t.Fatalf("%s: response status %q: %v", e.name, line, err)
		}
		out = append(out, e)
	}
	return out
}

// parseMessage splits a section into its first line, headers and body.
func parseMessage(t *testing.T, name string, data []byte) (string, http.Header, []byte) {
	t.Helper()
	head, body, _ := bytes.Cut(data, []byte("\n\n"))
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Scan()
	first := strings.TrimSpace(sc.Text())
	h := http.Header{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			t.Fatalf("%s: header line %q", name, sc.Text())
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return first, h, bytes.TrimSpace(body)
}

// replay is a forge that answers the recorded requests in order and
// fails the test at the first request that does not match the next
// recorded one, and at the end when one was not asked for: the contract
// is checked both ways.
type replay struct {
	t    *testing.T
	srv  *httptest.Server
	mu   sync.Mutex
	next int
	ex   []exchange
}

func newReplay(t *testing.T, contract string) *replay {
	t.Helper()
	r := &replay{t: t, ex: loadContract(t, contract)}
	r.srv = httptest.NewServer(r)
	t.Cleanup(func() {
		r.srv.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.next < len(r.ex) {
			t.Errorf("%s: the client never sent the recorded request %s %s", r.ex[r.next].name, r.ex[r.next].method, r.ex[r.next].path)
		}
	})
	return r
}

// done reports how many recorded exchanges were used.
func (r *replay) done() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	if r.next >= len(r.ex) {
		r.mu.Unlock()
		r.t.Errorf("unexpected request %s %s: the contract has no more", req.Method, req.URL)
		http.Error(w, "not in the contract", http.StatusTeapot)
		return
	}
	e := r.ex[r.next]
	r.next++
	r.mu.Unlock()
	if msg := e.mismatch(req, body); msg != "" {
		r.t.Errorf("%s: %s", e.name, msg)
		http.Error(w, "not the recorded request: "+msg, http.StatusTeapot)
		return
	}
	for k, vs := range e.respHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(e.respBody)
}

// mismatch says how req differs from the recorded request, "" when not.
func (e exchange) mismatch(req *http.Request, body []byte) string {
	if req.Method != e.method || req.URL.Path != e.path {
		return fmt.Sprintf("got %s %s, want %s %s", req.Method, req.URL.Path, e.method, e.path)
	}
	got := req.URL.Query()
	if len(got) == 0 {
		got = nil
	}
	if !reflect.DeepEqual(got, e.query) {
		return fmt.Sprintf("got the query %q, want %q", req.URL.RawQuery, e.query.Encode())
	}
	for k := range e.headers {
		v := req.Header.Get(k)
		if strings.EqualFold(k, "Host") {
			v = req.Host
		}
		if v != e.headers.Get(k) {
			return fmt.Sprintf("got the header %s: %q, want %q", k, v, e.headers.Get(k))
		}
	}
	switch {
	case len(e.body) == 0 && len(bytes.TrimSpace(body)) != 0:
		return fmt.Sprintf("got the body %s, want none", body)
	case len(e.body) != 0:
		var g, w any
		if err := json.Unmarshal(body, &g); err != nil {
			return fmt.Sprintf("the body %q is not JSON: %v", body, err)
		}
		if err := json.Unmarshal(e.body, &w); err != nil {
			return fmt.Sprintf("the recorded body is not JSON: %v", err)
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("got the body %s, want %s", body, e.body)
		}
	}
	return ""
}

// TestContractsParse: every contract file parses, and each recorded
// request sends the token.
func TestContractsParse(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "github", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no contracts: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(f), "testdata/"), ".txt")
		for _, e := range loadContract(t, name) {
			if e.headers.Get("Authorization") != "Bearer "+contractToken {
				t.Errorf("%s: the recorded request does not check the token", e.name)
			}
		}
	}
}
