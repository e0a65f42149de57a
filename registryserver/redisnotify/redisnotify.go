// Package redisnotify tells the replicas of a jig-server that share a
// storage, through Redis publish/subscribe, that the catalog changed, so
// their indexes read the change log at once instead of at their next
// poll ([registryserver.WithChangeNotifier]). A lost message costs only
// that wait: the change log in the storage stays the source of truth.
package redisnotify

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultChannel is the Redis channel the replicas publish and subscribe
// on.
const DefaultChannel = "jig:catalog:changed"

// Notifier publishes and receives catalog changes on a Redis channel.
type Notifier struct {
	client  *redis.Client
	channel string
}

// New returns a notifier over client on channel ("" for
// [DefaultChannel]). The caller closes client.
func New(client *redis.Client, channel string) *Notifier {
	if channel == "" {
		channel = DefaultChannel
	}
	return &Notifier{client: client, channel: channel}
}

// Notify tells the other replicas that the catalog changed. It is best
// effort: an error means they learn of it at their next poll.
func (n *Notifier) Notify(ctx context.Context) error {
	return n.client.Publish(ctx, n.channel, "1").Err()
}

// Subscribe calls changed for every notification until ctx is done,
// subscribing again after Redis goes away (waiting up to a few seconds
// between attempts).
func (n *Notifier) Subscribe(ctx context.Context, changed func()) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		sub := n.client.Subscribe(ctx, n.channel)
		stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
		if _, err := sub.Receive(ctx); err == nil {
			wait = 100 * time.Millisecond
			for msg := range sub.Channel() {
				_ = msg
				changed()
			}
		}
		stop()
		_ = sub.Close()
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
