// Package ratelimit counts requests per key (usually a client address) in
// fixed windows and tells the caller whether a request is within its budget.
//
// [Limiter] is the interface jig-server's middleware calls once per request.
// [Memory] is the in-process default: sharded, allocation free on the hot
// path, and bounded in memory however many distinct keys it sees (expired
// windows are dropped as shards are used, and a hard cap on tracked keys
// evicts the entries closest to expiry). The sub-package redisrate shares one
// budget per key across several jig-server replicas through Redis.
//
// Windows are fixed and start at a key's first request: a key may make
// Limit requests until Reset, after which a new window begins. This matches
// the reference server (@fastify/rate-limit), whose budget also starts with
// the first request of a key.
//
//	lim := ratelimit.NewMemory(1200, time.Minute)
//	res, err := lim.Allow(ctx, "203.0.113.7")
//	if err == nil && !res.Allowed {
//		// answer 429; res.Reset says when the budget is refilled
//	}
package ratelimit
