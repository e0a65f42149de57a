// Package webhook notifies HTTP endpoints when jig-server publishes a
// registry version.
//
// Endpoints are configured in webhooks.json, the reference's format:
//
//	{"webhooks": [{"url": "https://ci.example.com/hooks/jig", "secret": "…",
//	  "events": ["uploaded", "version.created"], "enabled": true,
//	  "description": "CI"}]}
//
// Each publish emits [EventUploaded] then [EventVersionCreated]. A
// [Dispatcher] delivers them asynchronously from a bounded in-memory queue:
// publishing never waits for, or fails because of, a webhook. Each delivery
// is a POST of the JSON body
//
//	{"event","name","version","namespace","timestamp","path"}
//
// (keys in that order) with the headers Content-Type: application/json,
// User-Agent: jig-webhook/1.0, X-Webhook-Event, X-Webhook-Timestamp (the
// body's timestamp), X-Webhook-Delivery (an id that stays the same across
// retries) and X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the exact
// body, keyed by the secret>. A receiver verifies it with [Verify].
//
// A 2xx answer is success. Anything else, a network error or a timeout is
// retried with exponential backoff (4 attempts by default: after 2 s, 4 s
// and 8 s). The events of one publish reach each endpoint in order.
// Failures are logged with the endpoint's scheme and host only, never its
// path, query or secret. [Dispatcher.Close] stops accepting events and
// drains the queue within the caller's deadline; the queue is in memory,
// so events still queued when a process dies are lost.
package webhook
