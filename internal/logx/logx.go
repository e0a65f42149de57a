package logx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TraceLevel is the zap level used for pino's "trace", one below
// [zapcore.DebugLevel].
const TraceLevel = zapcore.DebugLevel - 1

// Output formats accepted by [ResolveFormat] and [Config].
const (
	FormatJSON   = "json"
	FormatPretty = "pretty"
)

// ErrInvalid is returned for a level or format that is not one of the
// accepted values.
var ErrInvalid = errors.New("logx: invalid setting")

// ParseLevel parses a LOG_LEVEL value: trace, debug, info, warn, error or
// fatal (case-insensitive, surrounding spaces ignored). "" means info.
func ParseLevel(s string) (zapcore.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "trace":
		return TraceLevel, nil
	case "debug":
		return zapcore.DebugLevel, nil
	case "", "info":
		return zapcore.InfoLevel, nil
	case "warn", "warning":
		return zapcore.WarnLevel, nil
	case "error":
		return zapcore.ErrorLevel, nil
	case "fatal":
		return zapcore.FatalLevel, nil
	}
	return 0, fmt.Errorf("%w: log level %q is not one of trace, debug, info, warn, error, fatal", ErrInvalid, s)
}

// ResolveFormat picks the output format from LOG_FORMAT and NODE_ENV:
// an explicit format ("json" or "pretty", case-insensitive) wins; otherwise
// NODE_ENV=production means JSON and anything else (development, the
// default) means pretty console output.
func ResolveFormat(logFormat, nodeEnv string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(logFormat)); f {
	case FormatJSON, FormatPretty:
		return f, nil
	case "":
		if strings.EqualFold(strings.TrimSpace(nodeEnv), "production") {
			return FormatJSON, nil
		}
		return FormatPretty, nil
	default:
		return "", fmt.Errorf("%w: log format %q is not json or pretty", ErrInvalid, logFormat)
	}
}

// PinoLevel returns pino's numeric level for a zap level: 10 trace,
// 20 debug, 30 info, 40 warn, 50 error (and DPanic), 60 fatal (and Panic).
func PinoLevel(l zapcore.Level) int {
	switch {
	case l <= TraceLevel:
		return 10
	case l == zapcore.DebugLevel:
		return 20
	case l == zapcore.InfoLevel:
		return 30
	case l == zapcore.WarnLevel:
		return 40
	case l <= zapcore.DPanicLevel:
		return 50
	default:
		return 60
	}
}

// LevelName returns the lowercase pino name of a zap level.
func LevelName(l zapcore.Level) string {
	switch PinoLevel(l) {
	case 10:
		return "trace"
	case 20:
		return "debug"
	case 30:
		return "info"
	case 40:
		return "warn"
	case 50:
		return "error"
	default:
		return "fatal"
	}
}

// PinoEncoderConfig is the JSON encoder configuration producing pino's
// field names and value formats.
func PinoEncoderConfig() zapcore.EncoderConfig {
	c := pinoKeys()
	c.EncodeLevel = func(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) { enc.AppendInt(PinoLevel(l)) }
	c.EncodeTime = func(t time.Time, enc zapcore.PrimitiveArrayEncoder) { enc.AppendInt64(t.UnixMilli()) }
	c.EncodeDuration = zapcore.MillisDurationEncoder
	return c
}

// pinoKeys is an encoder configuration with pino's field names, shared by
// the JSON and the pretty output.
func pinoKeys() zapcore.EncoderConfig {
	return zapcore.EncoderConfig{
		MessageKey:    "msg",
		LevelKey:      "level",
		TimeKey:       "time",
		NameKey:       "name",
		StacktraceKey: "stack",
		LineEnding:    zapcore.DefaultLineEnding,
		EncodeName:    zapcore.FullNameEncoder,
	}
}

// PrettyEncoderConfig is the console encoder configuration for
// development: local time, coloured level names (TRACE included).
func PrettyEncoderConfig(color bool) zapcore.EncoderConfig {
	c := pinoKeys()
	c.EncodeLevel = func(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) {
		name := strings.ToUpper(LevelName(l))
		if color {
			name = colorFor(l) + name + "\x1b[0m"
		}
		enc.AppendString(name)
	}
	c.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	c.EncodeDuration = zapcore.StringDurationEncoder
	c.ConsoleSeparator = " "
	return c
}

func colorFor(l zapcore.Level) string {
	switch PinoLevel(l) {
	case 10:
		return "\x1b[90m" // grey
	case 20:
		return "\x1b[34m" // blue
	case 30:
		return "\x1b[32m" // green
	case 40:
		return "\x1b[33m" // yellow
	default:
		return "\x1b[31m" // red
	}
}

// Config selects a logger's level, format and destination.
type Config struct {
	// Level is a LOG_LEVEL value (see [ParseLevel]); "" means info.
	Level string
	// Format is a LOG_FORMAT value; "" lets NodeEnv decide (see
	// [ResolveFormat]).
	Format string
	// NodeEnv is the NODE_ENV value.
	NodeEnv string
	// Out receives the log lines. nil means os.Stdout.
	Out io.Writer
	// Color enables ANSI colours in pretty output. New leaves colour off
	// unless it is set; callers decide (a terminal, NO_COLOR unset).
	Color bool
	// BufferSize, when positive, buffers up to that many bytes of output
	// and flushes at least once a second (and on Sync, and before a
	// fatal entry exits), saving a write per line under load. Lines not
	// yet flushed are lost if the process crashes. The flushing goroutine
	// lives until the process exits, so use it in programs, not tests.
	// 0 writes every line at once.
	BufferSize int
}

// New builds the server logger described by cfg. JSON lines carry pid and
// hostname on every line; pretty lines leave them out, as pino-pretty does.
func New(cfg Config) (*zap.Logger, error) {
	level, err := ParseLevel(cfg.Level)
	if err != nil {
		return nil, err
	}
	format, err := ResolveFormat(cfg.Format, cfg.NodeEnv)
	if err != nil {
		return nil, err
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	ws := zapcore.Lock(zapcore.AddSync(out))
	if cfg.BufferSize > 0 {
		ws = &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(out), Size: cfg.BufferSize, FlushInterval: time.Second}
	}
	if format == FormatPretty {
		core := zapcore.NewCore(zapcore.NewConsoleEncoder(PrettyEncoderConfig(cfg.Color)), ws, level)
		return zap.New(core, zap.ErrorOutput(ws)), nil
	}
	core := zapcore.NewCore(newPinoEncoder(PinoEncoderConfig()), ws, level)
	host, _ := os.Hostname()
	return zap.New(core, zap.ErrorOutput(ws)).With(zap.Int("pid", os.Getpid()), zap.String("hostname", host)), nil
}

// ClearHeaders reports whether a logger logs sensitive headers in clear:
// only when it is enabled at debug level or below.
func ClearHeaders(l *zap.Logger) bool {
	return l.Core().Enabled(zapcore.DebugLevel)
}
