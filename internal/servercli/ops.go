package servercli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/ratelimit/redisrate"
	"github.com/jigkit/jig/registryserver/redisnotify"
)

// opsOptions returns the handler options for TRUST_PROXY and REDIS_URL and
// the metrics registry, plus a function that releases what they opened.
func opsOptions(ctx context.Context, c *CLI, log *zap.Logger, reg *prometheus.Registry) ([]registryserver.Option, func(), error) {
	hops, err := registryserver.ParseTrustProxy(c.TrustProxy)
	if err != nil {
		// The reference treats any other value as false; say so loudly.
		log.Warn("TRUST_PROXY is not true, false or a hop count; using false (rate limits key on the connection address)",
			zap.String("value", c.TrustProxy))
		hops = 0
	}
	opts := []registryserver.Option{registryserver.WithTrustProxy(hops), registryserver.WithMetrics(reg)}
	if strings.TrimSpace(c.RedisURL) == "" {
		return opts, func() {}, nil
	}
	client, err := redisrate.NewClient(c.RedisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// go-redis logs dial failures itself; route them to debug so that an
	// outage is reported by the limiter once per interval, not per request.
	redis.SetLogger(redisLogger{log.Named("redis")})
	lim, err := redisrate.New(client, registryserver.DefaultRateLimit, registryserver.DefaultRateWindow,
		redisrate.WithLogger(log), redisrate.WithRegisterer(reg))
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		log.Warn("Redis does not answer; requests are allowed without a rate limit until it does", zap.Error(err))
	} else {
		log.Info("rate limit shared through Redis", zap.String("redisAddr", client.Options().Addr))
	}
	// The same Redis tells the other replicas' catalog indexes of this
	// one's publishes at once (they poll the change log otherwise).
	return append(opts, registryserver.WithLimiter(lim), registryserver.WithChangeNotifier(redisnotify.New(client, ""))),
		func() { _ = client.Close() }, nil
}

// redisLogger sends go-redis's own log lines to zap at debug level.
type redisLogger struct{ log *zap.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug(fmt.Sprintf(format, v...))
}
