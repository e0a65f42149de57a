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
// development (colour only on a terminal and without NO_COLOR). Output to
// a file or pipe is buffered and flushed every second.
func newLogger(c *CLI, w io.Writer) (*zap.Logger, error) {
	color, buffer := false, 0
	if f, ok := w.(*os.File); ok {
		tty := term.IsTerminal(int(f.Fd()))
		color = tty && os.Getenv("NO_COLOR") == ""
		if !tty {
			// A file or pipe: one write per line costs a syscall per
			// request under load. Main syncs the logger on exit.
			buffer = 256 << 10
		}
	}
	return logx.New(logx.Config{Level: c.LogLevel, Format: c.LogFormat, NodeEnv: c.NodeEnv, Out: w, Color: color, BufferSize: buffer})
}
