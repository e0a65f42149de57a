// Package redisrate is a [ratelimit.Limiter] backed by Redis, so that
// several jig-server replicas share one budget per client address.
//
// Each key is a Redis counter incremented by a Lua script that sets the
// window's expiry on the first request (INCR then PEXPIRE, atomically), so
// the window semantics match [ratelimit.Memory]: a fixed window that starts
// at a key's first request.
//
// When Redis fails or cannot be reached the limiter fails open: the request
// is allowed, a warning is logged at most once per log interval, and the
// jig_ratelimit_redis_failures_total counter is incremented. After a failure
// Redis is not asked again for a short retry interval, so an outage does not
// add a network timeout to every request.
//
//	opt, _ := redis.ParseURL(os.Getenv("REDIS_URL"))
//	lim, err := redisrate.New(redis.NewClient(opt), 1200, time.Minute,
//		redisrate.WithLogger(logger), redisrate.WithRegisterer(reg))
package redisrate
