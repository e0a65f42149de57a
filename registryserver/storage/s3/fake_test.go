package s3_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// fakeS3 is just enough of an S3 server for PutIf's fallbacks: bucket HEAD,
// object PUT/GET/HEAD/DELETE. With honour false it ignores If-None-Match
// and If-Match, as some S3-compatible servers do.
type fakeS3 struct {
	honour bool
	mu     sync.Mutex
	objs   map[string][]byte
	puts   atomic.Int64
	// folderRaces is how many of the next PUTs fail as a posix gateway's
	// PUT does when a delete removes its folder at the same moment.
	folderRaces atomic.Int64
}

func newFake(t *testing.T, honour bool) (*fakeS3, string) {
	f, srv := newFakeServer(honour)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func newFakeServer(honour bool) (*fakeS3, *httptest.Server) {
	f := &fakeS3{honour: honour, objs: map[string][]byte{}}
	return f, httptest.NewServer(f)
}

func etagOf(b []byte) string { s := md5.Sum(b); return `"` + hex.EncodeToString(s[:]) + `"` }

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket != "bucket" {
		s3Error(w, http.StatusNotFound, "NoSuchBucket")
		return
	}
	if key == "" {
		w.WriteHeader(http.StatusOK) // HEAD bucket
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, exists := f.objs[key]
	switch r.Method {
	case http.MethodPut:
		body, err := readBody(r)
		if err != nil {
			s3Error(w, http.StatusBadRequest, "IncompleteBody")
			return
		}
		if f.folderRaces.Add(-1) >= 0 {
			s3Error(w, http.StatusConflict, "ExistingObjectIsDirectory")
			return
		}
		if f.honour {
			if r.Header.Get("If-None-Match") == "*" && exists {
				s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed")
				return
			}
			if m := r.Header.Get("If-Match"); m != "" && (!exists || m != etagOf(cur)) {
				s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed")
				return
			}
		}
		f.objs[key] = body
		f.puts.Add(1)
		w.Header().Set("ETag", etagOf(body))
		w.WriteHeader(http.StatusOK)
	case http.MethodGet, http.MethodHead:
		if !exists {
			s3Error(w, http.StatusNotFound, "NoSuchKey")
			return
		}
		w.Header().Set("ETag", etagOf(cur))
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Length", strconv.Itoa(len(cur)))
		if r.Method == http.MethodGet {
			w.Write(cur)
		}
	case http.MethodDelete:
		delete(f.objs, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		s3Error(w, http.StatusNotImplemented, "NotImplemented")
	}
}

// readBody decodes minio-go's aws-chunked streaming uploads.
func readBody(r *http.Request) ([]byte, error) {
	if !strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return io.ReadAll(r.Body)
	}
	br := bufio.NewReader(r.Body)
	var out bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		sizeHex, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out.Bytes(), nil
		}
		if _, err := io.CopyN(&out, br, n); err != nil {
			return nil, err
		}
		if _, err := br.Discard(2); err != nil {
			return nil, err
		}
	}
}

func fakeConfig(url string) s3.Config {
	return s3.Config{Endpoint: url, Bucket: "bucket", Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", PathStyle: true}
}

func TestPutIfRefusesServerWithoutConditionalWrites(t *testing.T) {
	t.Parallel()
	_, url := newFake(t, false)
	st, err := s3.New(t.Context(), fakeConfig(url))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.PutIf(t.Context(), "@main/a/1.0.0/registry.json", strings.NewReader("{}"), 2, "")
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("PutIf against a server that ignores If-None-Match: error = %v, want errors.ErrUnsupported", err)
	}
	if _, err := st.Stat(t.Context(), "@main/a/1.0.0/registry.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat after the refused PutIf: error = %v, want storage.ErrNotFound", err)
	}
}

func TestPutIfFallsBackToLock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		honour bool
		mode   s3.ConditionalMode
	}{
		{"auto, server ignores conditions", false, s3.ConditionalAuto},
		{"lock mode", true, s3.ConditionalLock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, url := newFake(t, tt.honour)
			var mu sync.Mutex
			var locks atomic.Int64
			cfg := fakeConfig(url)
			cfg.ConditionalWrites = tt.mode
			cfg.Lock = func(ctx context.Context, key string) (func(), error) {
				mu.Lock()
				locks.Add(1)
				return mu.Unlock, nil
			}
			st, err := s3.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			const key = "@main/a/1.0.0/registry.json"
			var wg sync.WaitGroup
			var wins atomic.Int64
			for i := range 6 {
				wg.Go(func() {
					_, err := st.PutIf(t.Context(), key, strings.NewReader(strconv.Itoa(i)), -1, "")
					switch {
					case err == nil:
						wins.Add(1)
					case !errors.Is(err, storage.ErrPrecondition):
						t.Errorf("creator %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Errorf("%d creators won, want exactly 1", wins.Load())
			}
			info, err := st.Stat(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.PutIf(t.Context(), key, strings.NewReader("x"), 1, `"stale"`); !errors.Is(err, storage.ErrPrecondition) {
				t.Errorf("PutIf with a stale ETag: error = %v, want storage.ErrPrecondition", err)
			}
			if _, err := st.PutIf(t.Context(), key, strings.NewReader("x"), 1, info.ETag); err != nil {
				t.Errorf("PutIf with the current ETag: %v", err)
			}
			if locks.Load() < 8 {
				t.Errorf("Lock called %d times, want once per PutIf (8)", locks.Load())
			}
		})
	}
}

func TestConditionalProbeRunsOnce(t *testing.T) {
	t.Parallel()
	f, url := newFake(t, true)
	st, err := s3.New(t.Context(), fakeConfig(url))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := st.PutIf(t.Context(), fmt.Sprintf("@main/a/%d", i), strings.NewReader("x"), 1, ""); err != nil {
			t.Fatal(err)
		}
	}
	// One successful probe PUT (the refused ones do not count) plus 3.
	if got := f.puts.Load(); got != 4 {
		t.Errorf("server saw %d stored PUTs, want 4 (one probe, three PutIfs)", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.objs {
		if strings.HasPrefix(k, ".jig/") {
			t.Errorf("probe object %q left behind", k)
		}
	}
}

// onlyReader hides every method of r but Read, as a network body does.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestPutRetriesLostFolderRace: a posix gateway's PUT that lost a race
// with the removal of its folder stored nothing; Put and PutIf send it
// again when the body can be read again, and report the error when it
// cannot or when the server keeps answering so.
func TestPutRetriesLostFolderRace(t *testing.T) {
	t.Parallel()
	const body = "claim"
	tests := []struct {
		name    string
		races   int64
		reader  func() io.Reader
		size    int64
		wantErr bool
	}{
		{"seekable body of known size", 2, func() io.Reader { return strings.NewReader(body) }, int64(len(body)), false},
		{"stream of unknown size is buffered", 2, func() io.Reader { return onlyReader{strings.NewReader(body)} }, -1, false},
		{"stream of known size cannot be sent twice", 1, func() io.Reader { return onlyReader{strings.NewReader(body)} }, int64(len(body)), true},
		{"a server that keeps refusing", 100, func() io.Reader { return strings.NewReader(body) }, int64(len(body)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, conditional := range []bool{false, true} {
				f, url := newFake(t, true)
				st, err := s3.New(t.Context(), fakeConfig(url))
				if err != nil {
					t.Fatal(err)
				}
				if conditional {
					// Probe first, so the injected races hit the PUT itself.
					if _, err := st.PutIf(t.Context(), "@main/probe", strings.NewReader("x"), 1, ""); err != nil {
						t.Fatal(err)
					}
				}
				f.folderRaces.Store(tt.races)
				const key = "@main/a/1.0.0/registry.json"
				if conditional {
					_, err = st.PutIf(t.Context(), key, tt.reader(), tt.size, "")
				} else {
					err = st.Put(t.Context(), key, tt.reader(), tt.size)
				}
				if tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), "ExistingObjectIsDirectory") {
						t.Errorf("conditional=%v: error = %v, want the server's ExistingObjectIsDirectory", conditional, err)
					}
					if _, err := st.Stat(t.Context(), key); !errors.Is(err, storage.ErrNotFound) {
						t.Errorf("conditional=%v: Stat after the failed put: %v, want storage.ErrNotFound", conditional, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("conditional=%v: %v", conditional, err)
				}
				rc, _, err := st.Get(t.Context(), key)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(rc)
				rc.Close()
				if string(got) != body {
					t.Errorf("conditional=%v: stored %q, want %q", conditional, got, body)
				}
			}
		})
	}
}
