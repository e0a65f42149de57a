package servercli

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the server's logger from LOG_LEVEL and LOG_FORMAT (or
// NODE_ENV), writing to w.
func newLogger(c *CLI, w io.Writer) (*zap.Logger, error) {
	level := zapcore.InfoLevel
	switch c.LogLevel {
	case "trace", "debug":
		level = zapcore.DebugLevel
	case "warn":
		level = zapcore.WarnLevel
	case "error":
		level = zapcore.ErrorLevel
	case "fatal":
		level = zapcore.FatalLevel
	}
	format := c.LogFormat
	if format == "" {
		format = "pretty"
		if c.NodeEnv == "production" {
			format = "json"
		}
	}
	var enc zapcore.Encoder
	if format == "json" {
		cfg := zap.NewProductionEncoderConfig()
		cfg.TimeKey, cfg.MessageKey = "time", "msg"
		cfg.EncodeTime = zapcore.EpochMillisTimeEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	} else {
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
		enc = zapcore.NewConsoleEncoder(cfg)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core), nil
}
