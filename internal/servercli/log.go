package servercli

import (
	"io"
	"os"

	"go.uber.org/zap"
	"golang.org/x/term"

	"github.com/jigkit/jig/internal/logx"
)

// newLogger builds the server's logger from LOG_LEVEL and LOG_FORMAT (or
// NODE_ENV): pino-compatible JSON lines, or coloured console lines in
// development (colour only on a terminal and without NO_COLOR).
func newLogger(c *CLI, w io.Writer) (*zap.Logger, error) {
	color := false
	if f, ok := w.(*os.File); ok && os.Getenv("NO_COLOR") == "" {
		color = term.IsTerminal(int(f.Fd()))
	}
	return logx.New(logx.Config{Level: c.LogLevel, Format: c.LogFormat, NodeEnv: c.NodeEnv, Out: w, Color: color})
}
