package redisrate

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrInvalidURL is returned by [NewClient] for a REDIS_URL it cannot use.
// The error text never repeats the URL, which may hold a password.
var ErrInvalidURL = errors.New("invalid Redis URL")

// NewClient returns a Redis client for rawURL (REDIS_URL: redis://,
// rediss:// or unix://, with optional user, password and database) set up
// for rate limiting: short dial and I/O timeouts that follow the request
// context, one dial attempt and no command retries, so an unreachable
// Redis costs a request little before the limiter fails open. Options given in the URL's query
// (dial_timeout=...) win. The caller closes the client.
func NewClient(rawURL string) (*redis.Client, error) {
	opt, err := redis.ParseURL(strings.TrimSpace(rawURL))
	if err != nil {
		if _, ok := errors.AsType[*url.Error](err); ok {
			return nil, fmt.Errorf("%w: it does not parse as a URL; use redis://[user:password@]host:port[/db]", ErrInvalidURL)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = time.Second
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = 500 * time.Millisecond
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = 500 * time.Millisecond
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = -1
	}
	if opt.DialerRetries == 0 {
		opt.DialerRetries = 1
	}
	opt.ContextTimeoutEnabled = true
	return redis.NewClient(opt), nil
}
