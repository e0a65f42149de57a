package main_test

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rogpeppe/go-internal/testscript"
)

// fail-files N: starts a reverse proxy in front of $SERVER_URL that answers
// 503 to every registry file download from the Nth one on (retries
// included) and sets $FAIL_URL. It is stopped when the script ends.
func cmdFailFiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fail-files N")
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	target, err := url.Parse(ts.Getenv("SERVER_URL"))
	ts.Check(err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var files atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/files/") && files.Add(1) >= n {
			http.Error(w, `{"code":"UNAVAILABLE","message":"injected failure"}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	ts.Defer(func() { _ = srv.Close() })
	ts.Setenv("FAIL_URL", "http://"+l.Addr().String())
}
