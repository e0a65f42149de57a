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

// A contract is a forge's API as its documentation describes it: the
// requests a client must send, in order, each with the answer the forge
// gives. It is a txtar file: its comment says what it covers and where
// the forge documents it, and may set "remote:" and "forge-url:" (with
// SERVER standing for the replaying server's address); its files come in
// pairs, N.request and N.response:
//
//	-- 1.request --
//	PUT /api/v4/projects/acme%2Fapp/merge_requests/7?x=y
//	Private-Token: TOKEN
//
//	{"title": "..."}
//	-- 1.response --
//	200
//	Content-Type: application/json
//
//	{"iid": 7}
//
// The request line has the escaped path and the query (compared as a
// set of values); the headers given must be sent with those values
// (TOKEN is the test's token); a body is compared as JSON. The response
// is a status, headers and a body, where SERVER is the server's address.
type contract struct {
	name      string
	comment   map[string]string
	exchanges []exchange
}

type exchange struct {
	method, path string
	query        url.Values
	headers      http.Header
	body         string
	status       int
	respHeaders  http.Header
	respBody     string
}

// contractToken is the token the tests send; TOKEN in a recorded
// request's header stands for it.
const contractToken = "contract-T0KEN-do-not-leak"

func loadContract(t *testing.T, path string) *contract {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{name: path, comment: map[string]string{}}
	for _, line := range strings.Split(string(a.Comment), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && (k == "remote" || k == "forge-url") {
			c.comment[k] = strings.TrimSpace(v)
		}
	}
	files := map[string]string{}
	for _, f := range a.Files {
		files[f.Name] = string(f.Data)
	}
	for i := 1; ; i++ {
		req, ok := files[fmt.Sprintf("%d.request", i)]
		if !ok {
			break
		}
		resp, ok := files[fmt.Sprintf("%d.response", i)]
		if !ok {
			t.Fatalf("%s: %d.request has no %d.response", path, i, i)
		}
		var e exchange
		first, headers, body := splitMessage(t, req)
		method, target, ok := strings.Cut(first, " ")
		if !ok {
			t.Fatalf("%s: %d.request: %q is not METHOD PATH", path, i, first)
		}
		p, q, _ := strings.Cut(target, "?")
		e.method, e.path, e.headers, e.body = method, p, headers, body
		if e.query, err = url.ParseQuery(q); err != nil {
			t.Fatalf("%s: %d.request: %v", path, i, err)
		}
		first, e.respHeaders, e.respBody = splitMessage(t, resp)
		if e.status, err = strconv.Atoi(first); err != nil {
			t.Fatalf("%s: %d.response: %q is not a status", path, i, first)
		}
		c.exchanges = append(c.exchanges, e)
	}
	if len(c.exchanges) == 0 || len(c.exchanges)*2 != len(files) {
		t.Fatalf("%s: want N.request and N.response pairs from 1, got %d files", path, len(files))
	}
	return c
}

// splitMessage splits an HTTP-like message into its first line, headers
// and body.
func splitMessage(t *testing.T, s string) (string, http.Header, string) {
	t.Helper()
	head, body, _ := strings.Cut(s, "\n\n")
	sc := bufio.NewScanner(strings.NewReader(head))
	sc.Scan()
	first := strings.TrimSpace(sc.Text())
	h := http.Header{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			t.Fatalf("%q is not a header", sc.Text())
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return first, h, strings.TrimSpace(body)
}

// replay serves c: each request must be the next one recorded, else the
// test fails and the request gets a 599. done reports the requests not
// sent.
type replay struct {
	t   *testing.T
	c   *contract
	srv *httptest.Server

	mu   sync.Mutex
	next int
}

func newReplay(t *testing.T, c *contract) *replay {
	r := &replay{t: t, c: c}
	r.srv = httptest.NewServer(r)
	t.Cleanup(func() {
		r.srv.Close()
		r.unsent()
	})
	return r
}

// done reports how many recorded requests were sent.
func (r *replay) done() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

func (r *replay) expand(s string) string { return strings.ReplaceAll(s, "SERVER", r.srv.URL) }

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if r.next >= len(r.c.exchanges) {
		r.t.Errorf("%s: unrecorded request %s %s after the last one", r.c.name, req.Method, req.URL.RequestURI())
		w.WriteHeader(599)
		return
	}
	e := r.c.exchanges[r.next]
	n := r.next + 1
	r.next++
	var problems []string
	if req.Method != e.method || req.URL.EscapedPath() != r.expand(e.path) {
		problems = append(problems, fmt.Sprintf("got %s %s, want %s %s", req.Method, req.URL.EscapedPath(), e.method, e.path))
	}
	if got := req.URL.Query(); !reflect.DeepEqual(map[string][]string(got), map[string][]string(e.query)) && !(len(got) == 0 && len(e.query) == 0) {
		problems = append(problems, fmt.Sprintf("query %v, want %v", got, e.query))
	}
	for k, vs := range e.headers {
		want := strings.ReplaceAll(vs[0], "TOKEN", contractToken)
		got := req.Header.Get(k)
		if strings.EqualFold(k, "Host") {
			got = req.Host
		}
		if got != want {
			problems = append(problems, fmt.Sprintf("header %s: %q, want %q", k, got, want))
		}
	}
	if !sameJSON(body, []byte(e.body)) {
		problems = append(problems, fmt.Sprintf("body %s, want %s", body, e.body))
	}
	if len(problems) > 0 {
		r.t.Errorf("%s: request %d does not match the contract:\n\t%s", r.c.name, n, strings.Join(problems, "\n\t"))
		w.WriteHeader(599)
		return
	}
	for k, vs := range e.respHeaders {
		for _, v := range vs {
			w.Header().Add(k, r.expand(v))
		}
	}
	w.WriteHeader(e.status)
	io.WriteString(w, r.expand(e.respBody))
}

// sameJSON reports whether a and b are the same JSON value (both empty
// counts).
func sameJSON(a, b []byte) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// unsent fails the test when recorded requests were not sent.
func (r *replay) unsent() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next < len(r.c.exchanges) {
		e := r.c.exchanges[r.next]
		r.t.Errorf("%s: %d of %d recorded requests sent; next: %s %s", r.c.name, r.next, len(r.c.exchanges), e.method, e.path)
	}
}

// TestContractsParse: every contract parses, and each recorded request
// checks that the token is sent.
func TestContractsParse(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no contracts: %v", err)
	}
	for _, f := range files {
		for i, e := range loadContract(t, f).exchanges {
			sends := false
			for _, vs := range e.headers {
				sends = sends || strings.Contains(vs[0], "TOKEN")
			}
			if !sends {
				t.Errorf("%s: request %d does not check the token", f, i+1)
			}
		}
	}
}
