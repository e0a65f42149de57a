package logx

import (
	"bytes"
	"math"
	"unicode/utf8"
	"unsafe"

	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

// Fields is what an object writes its fields to, in order: a JSON line of
// [New]'s loggers ([JSONFields]) or any zap encoder ([MarshalFields]).
type Fields interface {
	// String writes the field k with the string value v.
	String(k, v string)
	// ByteString writes the field k with the UTF-8 text v.
	ByteString(k string, v []byte)
	// Int writes the field k with the integer value v.
	Int(k string, v int64)
	// Float writes the field k with the float value v.
	Float(k string, v float64)
	// Object writes the field k whose value is the object o writes.
	Object(k string, o FieldsAppender)
}

// FieldsAppender is a log object that writes its fields to a [Fields].
type FieldsAppender interface {
	AppendFields(f Fields)
}

// JSONObject is a log object passed whole as a line's only field (with
// [go.uber.org/zap.Inline]): its MarshalLogObject is [MarshalFields] of
// itself. The JSON lines of [New]'s loggers write its fields with
// [JSONFields] instead of through zap's generic encoder: the same bytes,
// at a fraction of the cost, for a line written once per request. Other
// loggers (a test's observer, the pretty output) use MarshalLogObject.
type JSONObject interface {
	zapcore.ObjectMarshaler
	FieldsAppender
}

// MarshalFields writes the fields of o with enc: the MarshalLogObject of
// a [JSONObject].
func MarshalFields(enc zapcore.ObjectEncoder, o FieldsAppender) error {
	f := &encoderFields{enc: enc}
	o.AppendFields(f)
	return f.err
}

// encoderFields is [Fields] over a zap encoder.
type encoderFields struct {
	enc zapcore.ObjectEncoder
	err error // the first error
}

func (f *encoderFields) String(k, v string)            { f.enc.AddString(k, v) }
func (f *encoderFields) ByteString(k string, v []byte) { f.enc.AddByteString(k, v) }
func (f *encoderFields) Int(k string, v int64)         { f.enc.AddInt64(k, v) }
func (f *encoderFields) Float(k string, v float64)     { f.enc.AddFloat64(k, v) }

func (f *encoderFields) Object(k string, o FieldsAppender) {
	if err := f.enc.AddObject(k, fieldsMarshaler{o}); err != nil && f.err == nil {
		f.err = err
	}
}

// fieldsMarshaler is a [FieldsAppender] as a [zapcore.ObjectMarshaler].
type fieldsMarshaler struct{ o FieldsAppender }

func (m fieldsMarshaler) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return MarshalFields(enc, m.o)
}

// JSONFields is [Fields] writing into a JSON line exactly as zap's JSON
// encoder writes: the same separators and the same string escaping
// (quotes, backslashes and control characters escaped, invalid UTF-8
// replaced by \ufffd, nothing else). It is pointer-shaped: passing it as
// [Fields] does not allocate.
type JSONFields struct {
	buf *buffer.Buffer
}

// String writes the field k with the string value v.
func (f JSONFields) String(k, v string) {
	f.key(k)
	f.buf.AppendByte('"')
	appendEscaped(f.buf, v)
	f.buf.AppendByte('"')
}

// ByteString writes the field k with the UTF-8 text v (zap's
// AddByteString).
func (f JSONFields) ByteString(k string, v []byte) {
	f.String(k, unsafe.String(unsafe.SliceData(v), len(v)))
}

// Int writes the field k with the integer value v.
func (f JSONFields) Int(k string, v int64) {
	f.key(k)
	f.buf.AppendInt(v)
}

// Float writes the field k with the float value v as zap's AddFloat64
// does (NaN and infinities as strings).
func (f JSONFields) Float(k string, v float64) {
	f.key(k)
	switch {
	case math.IsNaN(v):
		f.buf.AppendString(`"NaN"`)
	case math.IsInf(v, 1):
		f.buf.AppendString(`"+Inf"`)
	case math.IsInf(v, -1):
		f.buf.AppendString(`"-Inf"`)
	default:
		f.buf.AppendFloat(v, 64)
	}
}

// Object writes the field k whose value is the object o writes.
func (f JSONFields) Object(k string, o FieldsAppender) {
	f.key(k)
	f.buf.AppendByte('{')
	o.AppendFields(f)
	f.buf.AppendByte('}')
}

// key writes the separator zap's encoder writes before a key (none after
// an opening brace or bracket, a colon or a comma), then the key.
func (f JSONFields) key(k string) {
	if n := f.buf.Len(); n > 0 {
		switch f.buf.Bytes()[n-1] {
		case '{', '[', ':', ',', ' ':
		default:
			f.buf.AppendByte(',')
		}
	}
	f.buf.AppendByte('"')
	appendEscaped(f.buf, k)
	f.buf.AppendString(`":`)
}

const hexDigits = "0123456789abcdef"

// special8 reports whether one of the 8 bytes of s may need escaping: a
// control character, a quote, a backslash or a byte of a multi-byte
// UTF-8 sequence. (A true answer only sends the loop byte by byte.)
func special8(s string) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// A byte under 0x20 borrows into its top bit; one equal to '"' or
	// '\\' is zero once xored and borrows too; a byte from 0x80 has its
	// top bit set. A borrow reaches a higher byte only from a byte that
	// is special itself.
	return (x|(x-lo*0x20)|((x^(lo*'"'))-lo)|((x^(lo*'\\'))-lo))&hi != 0
}

// appendEscaped writes s as zap's JSON encoder escapes it.
func appendEscaped(buf *buffer.Buffer, s string) {
	last := 0
	for i := 0; i < len(s); {
		// Skip eight plain bytes at a time.
		for i+8 <= len(s) && !special8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			buf.AppendString(s[last:i])
			buf.AppendString(`\ufffd`)
			i++
			last = i
			continue
		}
		if c >= 0x20 && c != '\\' && c != '"' {
			i++
			continue
		}
		buf.AppendString(s[last:i])
		switch c {
		case '\\', '"':
			buf.AppendByte('\\')
			buf.AppendByte(c)
		case '\n':
			buf.AppendString(`\n`)
		case '\r':
			buf.AppendString(`\r`)
		case '\t':
			buf.AppendString(`\t`)
		default:
			buf.AppendString(`\u00`)
			buf.AppendByte(hexDigits[c>>4])
			buf.AppendByte(hexDigits[c&0xF])
		}
		i++
		last = i
	}
	buf.AppendString(s[last:])
}

// pinoEncoder is the JSON encoder of [New]'s loggers: zap's, plus the
// [JSONObject] path.
type pinoEncoder struct {
	zapcore.Encoder
	lineEnding string
	// namespaced is set once a context field opened a namespace: the
	// fields then go inside it, before braces the JSONObject path does
	// not write, so it is not taken.
	namespaced bool
}

func newPinoEncoder(cfg zapcore.EncoderConfig) *pinoEncoder {
	le := cfg.LineEnding
	if le == "" {
		le = zapcore.DefaultLineEnding
	}
	return &pinoEncoder{Encoder: zapcore.NewJSONEncoder(cfg), lineEnding: le}
}

// Clone implements [zapcore.Encoder]; loggers made by With use it.
func (e *pinoEncoder) Clone() zapcore.Encoder {
	return &pinoEncoder{Encoder: e.Encoder.Clone(), lineEnding: e.lineEnding, namespaced: e.namespaced}
}

// OpenNamespace implements [zapcore.ObjectEncoder].
func (e *pinoEncoder) OpenNamespace(key string) {
	e.namespaced = true
	e.Encoder.OpenNamespace(key)
}

// EncodeEntry implements [zapcore.Encoder]. A line whose only field is an
// inline [JSONObject] is encoded without it, then its closing brace is
// replaced by the object's fields, written where zap would have written
// them.
func (e *pinoEncoder) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	if len(fields) != 1 || fields[0].Type != zapcore.InlineMarshalerType || ent.Stack != "" || e.namespaced {
		return e.Encoder.EncodeEntry(ent, fields)
	}
	o, ok := fields[0].Interface.(JSONObject)
	if !ok {
		return e.Encoder.EncodeEntry(ent, fields)
	}
	buf, err := e.Encoder.EncodeEntry(ent, nil)
	if err != nil {
		return buf, err
	}
	b := buf.Bytes()
	end := len(b) - 1 - len(e.lineEnding)
	if end < 0 || b[end] != '}' || !bytes.Equal(b[end+1:], []byte(e.lineEnding)) {
		buf.Free()
		return e.Encoder.EncodeEntry(ent, fields)
	}
	// Keep the line up to its closing brace: Reset keeps the bytes,
	// Write copies them onto themselves.
	buf.Reset()
	_, _ = buf.Write(b[:end])
	o.AppendFields(JSONFields{buf: buf})
	buf.AppendByte('}')
	buf.AppendString(e.lineEnding)
	return buf, nil
}
