package redisrate_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/jigkit/jig/registryserver/ratelimit/redisrate"
)

// A limiter whose Redis cannot be reached fails open: requests are allowed
// and counted in the failures metric.
func ExampleNew_failOpen() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more

	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer client.Close()
	reg := prometheus.NewRegistry()
	lim, err := redisrate.New(client, 1200, time.Minute, redisrate.WithRegisterer(reg))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := lim.Allow(context.Background(), "203.0.113.7")
	fmt.Println(res.Allowed, err)

	families, _ := reg.Gather()
	for _, f := range families {
		fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
	}
	// Output:
	// true <nil>
	// jig_ratelimit_redis_failures_total 1
}
