package ops

import (
	"bytes"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/jigkit/jig/internal/logx"
)

type fixedClock struct{}

func (fixedClock) Now() time.Time                       { return time.UnixMilli(1_700_000_000_123) }
func (fixedClock) NewTicker(time.Duration) *time.Ticker { return time.NewTicker(time.Hour) }

// TestRequestLogJSONMatchesZap checks that the request log line the
// server's JSON logger writes from requestLog.AppendFields has the
// bytes zap's JSON encoder writes from its MarshalLogObject.
func TestRequestLogJSONMatchesZap(t *testing.T) {
	t.Parallel()
	l := &requestLog{method: "GET", url: "/registries/@main/a\"b?c=\x01é", ip: "203.0.113.9", status: 404, ms: 1.234,
		headers: logx.HeaderObject{Header: http.Header{"Authorization": {"Bearer t"}, "Accept": {"a", "b"}, "X-Forwarded-For": {"203.0.113.9"}}}}
	l.id = append(l.idBuf[:0], "req-1z"...)

	var got, want bytes.Buffer
	log, err := logx.New(logx.Config{Level: "info", Format: logx.FormatJSON, Out: &got})
	if err != nil {
		t.Fatal(err)
	}
	log = log.WithOptions(zap.WithClock(fixedClock{}))
	host, _ := os.Hostname()
	zapLog := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(logx.PinoEncoderConfig()), zapcore.AddSync(&want), zapcore.InfoLevel),
		zap.WithClock(fixedClock{})).With(zap.Int("pid", os.Getpid()), zap.String("hostname", host))
	for _, lg := range []*zap.Logger{log, zapLog} {
		l.fields[0] = zap.Inline(l)
		lg.Info("request completed", l.fields[:]...)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("got line\n%s\nwant (zap's encoder)\n%s", got.Bytes(), want.Bytes())
	}
	if !bytes.Contains(got.Bytes(), []byte(`"headers":{"accept":"a, b","authorization":"[REDACTED]","x-forwarded-for":"203.0.113.9"}}`)) {
		t.Errorf("got line %s, want the headers last, sorted, the token redacted", got.Bytes())
	}
}

// TestAppendBase36 checks request ids against strconv's base 36.
func TestAppendBase36(t *testing.T) {
	t.Parallel()
	ns := []uint64{0, 1, 35, 36, 37, 1295, 1296, 46655, 46656, 1<<32 - 1, 1 << 32, 1<<63 + 12345, 1<<64 - 1}
	for n := uint64(1); n < 1<<62; n = n*3 + 1 {
		ns = append(ns, n, n-1, n+1)
	}
	for _, n := range ns {
		if got, want := string(appendBase36([]byte("req-"), n)), "req-"+strconv.FormatUint(n, 36); got != want {
			t.Errorf("appendBase36(%d) = %q, want %q", n, got, want)
		}
	}
}
