package wire_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/wire"
)

var auditNow = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

func TestParseAuditTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-12-01T10:00:00Z", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), true},
		{"2026-12-01T10:00:00.123+01:00", time.Date(2026, 12, 1, 9, 0, 0, 123e6, time.UTC), true},
		{"2026-12-01", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true},
		{"24h", auditNow.Add(-24 * time.Hour), true},
		{" 90m ", auditNow.Add(-90 * time.Minute), true},
		{"7d", auditNow.Add(-7 * 24 * time.Hour), true},
		{"0d", auditNow, true},
		{"-24h", time.Time{}, false},
		{"-1d", time.Time{}, false},
		{"36501d", time.Time{}, false},
		{"1000000h", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
		{"2026-13-01", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := wire.ParseAuditTime(tt.in, auditNow)
		if (err == nil) != tt.ok {
			t.Errorf("ParseAuditTime(%q): err = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && !got.Equal(tt.want) {
			t.Errorf("ParseAuditTime(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if !tt.ok && !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("ParseAuditTime(%q): error %q does not say which forms it takes", tt.in, err)
		}
	}
}

func TestParseAuditFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, query string
		want        wire.AuditFilter
		wantErr     string
	}{
		{"none", "", wire.AuditFilter{}, ""},
		{"all", "since=24h&until=2026-12-06T11:00:00Z&actor=admin&namespace=@team&action=census.&cursor=42&limit=5",
			wire.AuditFilter{Since: auditNow.Add(-24 * time.Hour), Until: time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC),
				Actor: "admin", Namespace: "@team", Action: "census.", Cursor: "42", Limit: 5}, ""},
		{"limit max", "limit=1000", wire.AuditFilter{Limit: 1000}, ""},
		{"limit zero", "limit=0", wire.AuditFilter{}, "limit \"0\" is not a number from 1 to 1000"},
		{"limit over", "limit=1001", wire.AuditFilter{}, "from 1 to 1000"},
		{"limit text", "limit=ten", wire.AuditFilter{}, "from 1 to 1000"},
		{"bad since", "since=yesterday", wire.AuditFilter{}, "since: \"yesterday\" is not a time"},
		{"since after until", "since=1h&until=2h", wire.AuditFilter{}, "must be before until"},
		{"unknown", "acter=admin", wire.AuditFilter{}, "unknown parameter \"acter\""},
		{"twice", "actor=a&actor=b", wire.AuditFilter{}, "\"actor\" is given 2 times"},
		{"long", "actor=" + strings.Repeat("a", 257), wire.AuditFilter{}, "actor is longer than 256 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := wire.ParseAuditFilter(q, auditNow)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, wire.ErrInvalidAuditQuery) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseAuditFilter(%q): err = %v, want one saying %q", tt.query, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAuditFilter(%q): %v", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAuditFilter(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

// FuzzParseAuditFilter checks that every query ParseAuditFilter accepts
// is within its bounds and comes back the same through Query.
func FuzzParseAuditFilter(f *testing.F) {
	for _, s := range []string{"", "since=24h&limit=5", "since=2026-12-01&until=2026-12-02T00:00:00.5Z&action=census.",
		"actor=CI%20(token:0123456789ab)&namespace=@team&cursor=17", "limit=-1", "since=7d&since=8d", "x=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		got, err := wire.ParseAuditFilter(q, auditNow)
		if err != nil {
			if !errors.Is(err, wire.ErrInvalidAuditQuery) {
				t.Fatalf("ParseAuditFilter(%q): %v does not wrap ErrInvalidAuditQuery", query, err)
			}
			return
		}
		if got.Limit < 0 || got.Limit > wire.MaxAuditPage {
			t.Fatalf("ParseAuditFilter(%q): limit %d", query, got.Limit)
		}
		for _, s := range []string{got.Actor, got.Namespace, got.Action, got.Cursor} {
			if len(s) > 256 {
				t.Fatalf("ParseAuditFilter(%q): a value of %d bytes", query, len(s))
			}
		}
		again, err := wire.ParseAuditFilter(got.Query(), auditNow)
		if err != nil {
			t.Fatalf("ParseAuditFilter(Query()) of %q: %v", query, err)
		}
		if !again.Since.Equal(got.Since) || !again.Until.Equal(got.Until) {
			t.Fatalf("times of %q changed through Query: %v %v, then %v %v", query, got.Since, got.Until, again.Since, again.Until)
		}
		again.Since, again.Until, got.Since, got.Until = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("%q through Query (-first +again):\n%s", query, diff)
		}
	})
}
