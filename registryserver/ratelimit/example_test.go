package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jigkit/jig/registryserver/ratelimit"
)

func ExampleNewMemory() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lim, err := ratelimit.NewMemory(2, time.Minute, ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		res, _ := lim.Allow(context.Background(), "203.0.113.7")
		fmt.Println(res.Allowed, res.Remaining, res.ResetSeconds(now))
	}
	// Output:
	// true 1 60
	// true 0 60
	// false 0 60
}
