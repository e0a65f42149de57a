package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/jigkit/jig/internal/jsonkeys"
	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/internal/safefile"
)

// The events jig-server emits, in this order, for every published version.
const (
	EventUploaded       = "uploaded"
	EventVersionCreated = "version.created"
)

// Hook is one endpoint of webhooks.json.
type Hook struct {
	// URL is the absolute http or https URL the events are POSTed to.
	URL string `json:"url"`
	// Secret keys the HMAC-SHA256 signature of every body.
	Secret string `json:"secret"`
	// Events are the event names the endpoint receives.
	Events []string `json:"events"`
	// Enabled must be true for anything to be sent.
	Enabled bool `json:"enabled"`
	// Description is a free label, safe to log.
	Description string `json:"description,omitempty"`
}

// String describes the hook for logs: its description and the scheme and
// host of its URL. The secret, path and query are left out.
func (h Hook) String() string {
	s := redact.Origin(h.URL)
	if h.Description != "" {
		s = h.Description + " (" + s + ")"
	}
	return s
}

// Subscribed reports whether the hook is enabled and lists event.
func (h Hook) Subscribed(event string) bool {
	return h.Enabled && slices.Contains(h.Events, event)
}

// maxConfigSize bounds webhooks.json: a larger file is refused.
const maxConfigSize = 4 << 20

// Config is the content of webhooks.json.
type Config struct {
	Webhooks []Hook `json:"webhooks"`
	// Warnings are problems that do not stop the server, such as event
	// names jig never emits. They never contain a secret.
	Warnings []string `json:"-"`
}

// Load reads and parses the webhooks.json file at path. A missing file is
// an error wrapping [os.ErrNotExist]; the caller decides whether that means
// "no webhooks".
func Load(path string) (*Config, error) {
	// safefile: a FIFO or device at path is refused instead of blocking
	// the start or a SIGHUP reload.
	data, err := safefile.ReadFile(path, maxConfigSize)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %s: %w", path, err)
	}
	return c, nil
}

// Parse parses a webhooks.json document. As in the reference, every entry
// must have "url" and "secret" strings, an "events" array and a boolean
// "enabled"; jig also requires the URL to be absolute http(s) and the
// secret to be non-empty, and refuses a document with a key twice in one
// object (readers disagree on which counts). Event names jig never emits are kept and
// reported in Warnings.
func Parse(data []byte) (*Config, error) {
	if err := jsonkeys.Check(data); err != nil {
		return nil, err
	}
	var raw struct {
		Webhooks *[]json.RawMessage `json:"webhooks"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON object of the form {\"webhooks\": [...]}: %w", err)
	}
	c := &Config{}
	if raw.Webhooks == nil {
		return nil, errors.New(`missing the "webhooks" array; an empty file is {"webhooks": []}`)
	}
	for i, r := range *raw.Webhooks {
		h, warns, err := parseHook(r)
		if err != nil {
			return nil, fmt.Errorf("webhooks[%d]: %w", i, err)
		}
		for _, w := range warns {
			c.Warnings = append(c.Warnings, fmt.Sprintf("webhooks[%d] %s: %s", i, h, w))
		}
		c.Webhooks = append(c.Webhooks, h)
	}
	return c, nil
}

func parseHook(r json.RawMessage) (Hook, []string, error) {
	var e struct {
		URL         *string   `json:"url"`
		Secret      *string   `json:"secret"`
		Events      *[]string `json:"events"`
		Enabled     *bool     `json:"enabled"`
		Description *string   `json:"description"`
	}
	if err := json.Unmarshal(r, &e); err != nil {
		// json's message names the field and the type, never the value.
		return Hook{}, nil, fmt.Errorf("not an object with url, secret, events and enabled: %w", err)
	}
	switch {
	case e.URL == nil:
		return Hook{}, nil, errors.New(`"url" (a string) is required`)
	case e.Secret == nil:
		return Hook{}, nil, errors.New(`"secret" (a string) is required`)
	case e.Events == nil:
		return Hook{}, nil, errors.New(`"events" (an array of event names) is required`)
	case e.Enabled == nil:
		return Hook{}, nil, errors.New(`"enabled" (true or false) is required`)
	}
	u, err := url.Parse(*e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Hook{}, nil, fmt.Errorf(`"url" must be an absolute http:// or https:// URL, got %q`, redact.Origin(*e.URL))
	}
	if *e.Secret == "" {
		return Hook{}, nil, errors.New(`"secret" must not be empty; generate one with: openssl rand -hex 32`)
	}
	h := Hook{URL: *e.URL, Secret: *e.Secret, Events: *e.Events, Enabled: *e.Enabled}
	if e.Description != nil {
		h.Description = *e.Description
	}
	var warns []string
	for _, ev := range h.Events {
		if ev != EventUploaded && ev != EventVersionCreated {
			warns = append(warns, fmt.Sprintf("event %q is never sent (known events: %s, %s)", ev, EventUploaded, EventVersionCreated))
		}
	}
	if h.Enabled && len(h.Events) == 0 {
		warns = append(warns, "enabled but subscribed to no events")
	}
	return h, warns, nil
}
