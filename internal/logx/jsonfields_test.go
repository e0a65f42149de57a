package logx

import (
	"bytes"
	"math"
	"net/http"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// testObject is a [JSONObject] with one field of each kind.
type testObject struct {
	id      []byte
	s       string
	n       int64
	f       float64
	headers HeaderObject
}

func (o *testObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return MarshalFields(enc, o)
}

func (o *testObject) AppendFields(f Fields) {
	f.ByteString("id", o.id)
	f.String("s", o.s)
	f.Int("n", o.n)
	f.Float("f", o.f)
	f.Object("headers", &o.headers)
}

type fixedClock struct{}

func (fixedClock) Now() time.Time                       { return time.UnixMilli(1_700_000_000_123) }
func (fixedClock) NewTicker(time.Duration) *time.Ticker { return time.NewTicker(time.Hour) }

// spyObject tells which of its methods wrote it.
type spyObject struct{}

func (spyObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("via", "MarshalLogObject")
	return nil
}

func (spyObject) AppendFields(f Fields) { f.String("via", "AppendFields") }

func TestNewJSONUsesAppendFields(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log, err := New(Config{Level: "info", Format: FormatJSON, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("request completed", zap.Inline(spyObject{}))
	if !bytes.Contains(out.Bytes(), []byte(`"hostname":`)) || !bytes.HasSuffix(out.Bytes(), []byte(`,"via":"AppendFields"}`+"\n")) {
		t.Errorf("got %s, want the line written by AppendFields", out.Bytes())
	}
	out.Reset()
	log.Info("request completed", zap.Inline(spyObject{}), zap.Int("n", 1))
	if !bytes.Contains(out.Bytes(), []byte(`"via":"MarshalLogObject","n":1}`)) {
		t.Errorf("got %s, want a line with more fields written by zap", out.Bytes())
	}
}

func TestJSONObjectLineMatchesZap(t *testing.T) {
	t.Parallel()
	h := http.Header{"Accept-Encoding": {"br, gzip"}, "Authorization": {"Bearer secret"}, "X-Odd": {"a\x00b", "c\"d"}}
	objects := []*testObject{
		{id: []byte("req-1"), s: "GET", n: 200, f: 0.002, headers: HeaderObject{Header: h}},
		{id: []byte("req-\xff"), s: "/a?b=\"c\"\\d\n\r\t\x01\u2028é\xc3", n: -1, f: 1e21, headers: HeaderObject{Header: h, Clear: true}},
		{s: "", f: math.NaN()},
		{f: math.Inf(1)},
		{f: math.Inf(-1), headers: HeaderObject{Header: http.Header{}}},
	}
	for _, o := range objects {
		want, got := encodeBoth(t, o)
		if !bytes.Equal(got, want) {
			t.Errorf("got line\n%s\nwant (zap's encoder)\n%s", got, want)
		}
	}
}

// encodeBoth writes o as a line's only inline field with zap's JSON
// encoder (want) and with New's (got), both configured as New does.
func encodeBoth(t testing.TB, o *testObject, with ...zap.Field) (want, got []byte) {
	t.Helper()
	var zapOut, newOut bytes.Buffer
	for _, c := range []struct {
		enc zapcore.Encoder
		out *bytes.Buffer
	}{
		{zapcore.NewJSONEncoder(PinoEncoderConfig()), &zapOut},
		{newPinoEncoder(PinoEncoderConfig()), &newOut},
	} {
		log := zap.New(zapcore.NewCore(c.enc, zapcore.AddSync(c.out), zapcore.InfoLevel), zap.WithClock(fixedClock{})).
			With(zap.Int("pid", 7), zap.String("hostname", "h\"ost")).With(with...)
		log.Info("request completed", zap.Inline(o))
		log.Info("two fields", zap.Inline(o), zap.String("x", "y"))
	}
	return zapOut.Bytes(), newOut.Bytes()
}

func TestJSONObjectLineInNamespace(t *testing.T) {
	t.Parallel()
	o := &testObject{id: []byte("req-1"), s: "GET", headers: HeaderObject{Header: http.Header{"A": {"b"}}}}
	want, got := encodeBoth(t, o, zap.Namespace("ns"), zap.String("k", "v"))
	if !bytes.Equal(got, want) {
		t.Errorf("got line\n%s\nwant (zap's encoder)\n%s", got, want)
	}
}

func FuzzJSONObjectLineMatchesZap(f *testing.F) {
	f.Add([]byte("req-1"), "GET", "/registries/@main/x?token=a", "10.0.0.1", int64(200), 0.25, "br, gzip", "x\x7f\xe2\x80")
	f.Fuzz(func(t *testing.T, id []byte, method, url, ip string, status int64, ms float64, hv1, hv2 string) {
		o := &testObject{id: id, s: method + url + ip, n: status, f: ms,
			headers: HeaderObject{Header: http.Header{"Accept-Encoding": {hv1}, "X-" + hv2: {hv1, hv2}, hv2: {url}}}}
		want, got := encodeBoth(t, o)
		if !bytes.Equal(got, want) {
			t.Errorf("got line\n%s\nwant (zap's encoder)\n%s", got, want)
		}
	})
}

// BenchmarkRequestLine encodes a request log line with zap's JSON encoder
// and with New's, which takes the [JSONObject] path.
func BenchmarkRequestLine(b *testing.B) {
	o := &testObject{id: []byte("req-6wz4"), s: "/registries/@main/quality/prettier/1.0.0/files/templates/prettierrc.json", n: 200, f: 0.002,
		headers: HeaderObject{Header: http.Header{"Accept-Encoding": {"br, gzip"}, "X-Forwarded-For": {"152.31.37.139"}}}}
	for _, c := range []struct {
		name string
		enc  zapcore.Encoder
	}{
		{"zap", zapcore.NewJSONEncoder(PinoEncoderConfig())},
		{"logx", newPinoEncoder(PinoEncoderConfig())},
	} {
		b.Run(c.name, func(b *testing.B) {
			enc := c.enc.Clone()
			enc.AddInt("pid", 7)
			enc.AddString("hostname", "vm")
			ent := zapcore.Entry{Level: zapcore.InfoLevel, Time: fixedClock{}.Now(), Message: "request completed"}
			fields := []zapcore.Field{zap.Inline(o)}
			b.ReportAllocs()
			for b.Loop() {
				buf, err := enc.EncodeEntry(ent, fields)
				if err != nil {
					b.Fatal(err)
				}
				buf.Free()
			}
		})
	}
}
