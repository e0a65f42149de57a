package logx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestParseLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    zapcore.Level
		wantErr bool
	}{
		{"trace", TraceLevel, false},
		{"DEBUG", zapcore.DebugLevel, false},
		{"", zapcore.InfoLevel, false},
		{" info ", zapcore.InfoLevel, false},
		{"warn", zapcore.WarnLevel, false},
		{"error", zapcore.ErrorLevel, false},
		{"fatal", zapcore.FatalLevel, false},
		{"verbose", 0, true},
		{"10", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLevel(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("got error %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v, want %v, nil", got, err, tt.want)
			}
		})
	}
}

func TestResolveFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, env string
		want        string
		wantErr     bool
	}{
		{"", "", FormatPretty, false},
		{"", "development", FormatPretty, false},
		{"", "production", FormatJSON, false},
		{"", "Production", FormatJSON, false},
		{"json", "development", FormatJSON, false},
		{"PRETTY", "production", FormatPretty, false},
		{"xml", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.env, func(t *testing.T) {
			t.Parallel()
			got, err := ResolveFormat(tt.format, tt.env)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %q, %v, want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// decodeLines parses JSON log lines.
func decodeLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestNewJSONPinoFields(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := New(Config{Level: "trace", NodeEnv: "production", Out: &buf})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	log.Log(TraceLevel, "t")
	log.Debug("d")
	log.Info("i", zap.Int("port", 8080))
	log.Warn("w")
	log.Error("e")
	after := time.Now().UnixMilli()

	lines := decodeLines(t, buf.Bytes())
	wantLevels := []int64{10, 20, 30, 40, 50}
	if len(lines) != len(wantLevels) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(wantLevels), buf.String())
	}
	host, _ := os.Hostname()
	for i, m := range lines {
		lvl, err := m["level"].(json.Number).Int64()
		if err != nil || lvl != wantLevels[i] {
			t.Errorf("line %d: got level %v, want the number %d", i, m["level"], wantLevels[i])
		}
		tm, err := m["time"].(json.Number).Int64()
		if err != nil || tm < before || tm > after {
			t.Errorf("line %d: got time %v, want epoch milliseconds in [%d, %d]", i, m["time"], before, after)
		}
		if pid, _ := m["pid"].(json.Number).Int64(); pid != int64(os.Getpid()) {
			t.Errorf("line %d: got pid %v, want %d", i, m["pid"], os.Getpid())
		}
		if m["hostname"] != host {
			t.Errorf("line %d: got hostname %v, want %q", i, m["hostname"], host)
		}
		if _, ok := m["msg"].(string); !ok {
			t.Errorf("line %d: got msg %v, want a string", i, m["msg"])
		}
	}
	if got := lines[2]["port"]; got != json.Number("8080") {
		t.Errorf("got port %v, want 8080", got)
	}
}

func TestNewLevelFilters(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := New(Config{Level: "warn", Format: "json", Out: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown")
	lines := decodeLines(t, buf.Bytes())
	if len(lines) != 1 || lines[0]["msg"] != "shown" {
		t.Errorf("got %v, want only the warn line", lines)
	}
}

func TestNewPretty(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := New(Config{Level: "trace", Out: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Log(TraceLevel, "tracing", zap.String("k", "v"))
	log.Info("hello")
	out := buf.String()
	for _, want := range []string{"TRACE", "tracing", `"k": "v"`, "INFO", "hello"} {
		if !strings.Contains(out, want) {
			t.Errorf("pretty output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "hostname") || strings.Contains(out, "\x1b[") {
		t.Errorf("pretty output %q has hostname or colour codes, want neither", out)
	}
}

func TestNewInvalid(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Level: "loud"}, {Format: "xml"}} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%+v): got %v, want ErrInvalid", cfg, err)
		}
	}
}

func TestHeadersRedaction(t *testing.T) {
	t.Parallel()
	h := http.Header{
		"Authorization":       {"Bearer tok-1"},
		"Cookie":              {"sid=tok-2"},
		"Set-Cookie":          {"a=tok-3"},
		"X-Registry-Token":    {"tok-4"},
		"Proxy-Authorization": {"Basic tok-5"},
		"Accept":              {"application/json"},
		"X-Multi":             {"a", "b"},
	}
	tests := []struct {
		name  string
		level zapcore.Level
		want  map[string]any
	}{
		{"info redacts", zapcore.InfoLevel, map[string]any{
			"authorization": Redacted, "cookie": Redacted, "set-cookie": Redacted,
			"x-registry-token": Redacted, "proxy-authorization": Redacted,
			"accept": "application/json", "x-multi": "a, b",
		}},
		{"debug is clear", zapcore.DebugLevel, map[string]any{
			"authorization": "Bearer tok-1", "cookie": "sid=tok-2", "set-cookie": "a=tok-3",
			"x-registry-token": "tok-4", "proxy-authorization": "Basic tok-5",
			"accept": "application/json", "x-multi": "a, b",
		}},
		{"trace is clear", TraceLevel, map[string]any{
			"authorization": "Bearer tok-1", "cookie": "sid=tok-2", "set-cookie": "a=tok-3",
			"x-registry-token": "tok-4", "proxy-authorization": "Basic tok-5",
			"accept": "application/json", "x-multi": "a, b",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			core, logs := observer.New(tt.level)
			log := zap.New(core)
			log.Warn("request completed", zap.Object("headers", Headers(h, ClearHeaders(log))))
			entries := logs.All()
			if len(entries) != 1 {
				t.Fatalf("got %d entries, want 1", len(entries))
			}
			got := entries[0].ContextMap()["headers"]
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzRedactURL checks that a credential placed in a sensitive query
// parameter never survives, and that URLs without a query are untouched.
func FuzzRedactURL(f *testing.F) {
	data, err := os.ReadFile("testdata/urls.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f.Add(line, "SeCrEt-VaLuE-42")
	}
	f.Fuzz(func(t *testing.T, raw, secret string) {
		if len(secret) < 8 || strings.ContainsAny(secret, "&#=%+ ") {
			return
		}
		if strings.Contains(raw, secret) {
			return
		}
		base, _, _ := strings.Cut(raw, "#")
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		for _, param := range []string{"token", "access_token", "X-Api-Key", "password"} {
			withSecret := base + sep + param + "=" + url.QueryEscape(secret)
			if got := RedactURL(withSecret); strings.Contains(got, url.QueryEscape(secret)) {
				t.Fatalf("RedactURL(%q) = %q still holds the secret", withSecret, got)
			}
		}
		if !strings.Contains(raw, "?") && !strings.Contains(raw, "@") {
			if got := RedactURL(raw); got != raw {
				t.Fatalf("RedactURL(%q) = %q, want it unchanged", raw, got)
			}
		}
	})
}

func TestNewBuffered(t *testing.T) {
	t.Parallel()
	var buf syncedBuffer
	log, err := New(Config{Format: FormatJSON, Out: &buf, BufferSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("buffered")
	if err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	lines := decodeLines(t, buf.Bytes())
	if len(lines) != 1 || lines[0]["msg"] != "buffered" {
		t.Errorf("after Sync: got %v, want the buffered line", lines)
	}
}

// syncedBuffer is a bytes.Buffer safe for the flushing goroutine.
type syncedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

func TestObservedLevelsMapToPino(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(TraceLevel)
	log := zap.New(core)
	log.Log(TraceLevel, "t")
	log.Debug("d")
	log.Info("i")
	log.Warn("w")
	log.Error("e")
	log.Log(zapcore.DPanicLevel, "dp") // not a development logger: does not panic
	var got []int
	for _, e := range logs.All() {
		got = append(got, PinoLevel(e.Level))
	}
	if diff := cmp.Diff([]int{10, 20, 30, 40, 50, 50}, got); diff != "" {
		t.Errorf("pino levels mismatch (-want +got):\n%s", diff)
	}
}
