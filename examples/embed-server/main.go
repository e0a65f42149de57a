// Command embed-server shows how to mount the jig registry handler inside
// another Go HTTP service: the registry lives under /registry/, next to the
// service's own routes, behind the service's own middleware (a request ID
// and an access log).
//
//	go run ./embed-server -addr 127.0.0.1:8090                # demo content in memory
//	go run ./embed-server -storage ./data -auth ./auth.json    # a real storage directory
//
// Clients use the prefix as part of the registry URL:
//
//	jig config set @demo --url http://127.0.0.1:8090/registry
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed-server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("embed-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	storageDir := fs.String("storage", "", "storage directory (default: demo content in memory)")
	authFile := fs.String("auth", "", "auth.json (default: every namespace public)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	var st storage.Storage
	if *storageDir != "" {
		d, err := disk.New(*storageDir)
		if err != nil {
			return err
		}
		st = d
	} else {
		m := memory.New()
		if err := seedDemo(ctx, m); err != nil {
			return err
		}
		st = m
	}
	opts := []registryserver.Option{registryserver.WithStorage(st)}
	if *authFile != "" {
		opts = append(opts, registryserver.WithAuthFile(*authFile))
	}
	reg, err := registryserver.New(opts...)
	if err != nil {
		return err
	}
	defer reg.Close()

	mux := http.NewServeMux()
	// The registry handler sees paths without the prefix.
	mux.Handle("/registry/", http.StripPrefix("/registry", reg))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "host service: the jig registry is mounted at /registry/")
	})

	srv := &http.Server{
		Handler:           withRequestID(withAccessLog(logger, mux)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "registry at http://%s/registry\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// withRequestID gives every request an X-Request-Id (kept when the caller
// sent one) and echoes it on the response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
			r.Header.Set("X-Request-Id", id)
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// withAccessLog logs one line per request. It never logs credentials: only
// method, path, status and duration.
func withAccessLog(l *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		l.Info("request", "id", r.Header.Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration", time.Since(start))
	})
}

// seedDemo stores one small registry, @demo/tools/hello 1.0.0.
func seedDemo(ctx context.Context, st storage.Storage) error {
	files := map[string]string{
		"@demo/tools/hello/versions.json": `{"versions":["1.0.0"]}` + "\n",
		"@demo/tools/hello/1.0.0/registry.json": `{"name":"hello","namespace":"@demo","path":"tools/hello","version":"1.0.0",` +
			`"type":"registry:feature","priority":4,"description":"Says hello.",` +
			`"files":[{"target":"src/hello.ts","type":"registry:lib","path":"templates/hello.ts"},` +
			`{"target":"README.md","type":"registry:docs","path":"templates/README.md"}]}` + "\n",
		"@demo/tools/hello/1.0.0/templates/hello.ts":  "export const hello = (name: string) => `Hello, ${name}!`;\n",
		"@demo/tools/hello/1.0.0/templates/README.md": "# hello\n",
	}
	for k, v := range files {
		if err := st.Put(ctx, k, strings.NewReader(v), int64(len(v))); err != nil {
			return err
		}
	}
	return nil
}
