package logx_test

import (
	"fmt"
	"net/http"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/jigkit/jig/internal/logx"
)

func ExampleRedactURL() {
	fmt.Println(logx.RedactURL("/registries/@team/ui?token=abc123&page=2"))
	// Output:
	// /registries/@team/ui?token=[REDACTED]&page=2
}

func ExampleHeaders() {
	// A JSON logger without time and pid, so the output is stable.
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg"}),
		zapcore.AddSync(os.Stdout), zapcore.InfoLevel)
	log := zap.New(core)
	h := http.Header{"Authorization": {"Bearer abc"}, "Accept": {"*/*"}}
	log.Info("request completed", zap.Object("headers", logx.Headers(h, logx.ClearHeaders(log))))
	// Output:
	// {"msg":"request completed","headers":{"accept":"*/*","authorization":"[REDACTED]"}}
}

func ExamplePinoLevel() {
	for _, l := range []zapcore.Level{logx.TraceLevel, zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel, zapcore.FatalLevel} {
		fmt.Print(logx.PinoLevel(l), " ")
	}
	fmt.Println()
	// Output:
	// 10 20 30 40 50 60
}
