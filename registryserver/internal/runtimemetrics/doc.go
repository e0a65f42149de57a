// Package runtimemetrics registers the process and runtime metrics that
// jig-server exposes on /metrics.
//
// The reference server (Node, prom-client) exposes process_* and nodejs_*
// metrics that dashboards and alert rules already use. This package keeps
// those names: the process_* ones are read from /proc on Linux (the
// standard process collector, plus the user/system CPU split prom-client
// has), and the four nodejs_* ones are fed by their Go runtime equivalents,
// which their HELP text says:
//
//   - nodejs_heap_size_total_bytes: heap memory mapped by the Go runtime and
//     not returned to the OS (runtime/metrics /memory/classes/heap/...).
//   - nodejs_heap_size_used_bytes: bytes in live and not yet swept heap
//     objects (/memory/classes/heap/objects:bytes).
//   - nodejs_eventloop_lag_seconds: goroutine scheduling lag, the delay
//     between a ticker firing and its goroutine running, sampled by a
//     background goroutine that [Runtime.Stop] ends.
//   - nodejs_gc_duration_seconds: Go GC stop-the-world pauses, as a
//     histogram with prom-client's buckets and kind="major" (Go's collector
//     is not generational; every cycle is a full one).
//
// The standard go_* collectors are registered too.
package runtimemetrics
