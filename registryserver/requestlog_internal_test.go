package registryserver

import (
	"bytes"
	"net/http"
	"os"
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
// server's JSON logger writes from requestLog.AppendJSONFields has the
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
