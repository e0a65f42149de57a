package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver/storage"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const ttl, legacy = 30 * time.Second, 15 * time.Minute
	const self, other = "self-owner", "other-owner"
	beat := func(owner string, age time.Duration) claimView {
		return claimView{valid: true, modTime: now.Add(-age), doc: claimDoc{
			ID: "c1", Owner: owner, Started: now.Add(-time.Hour), Heartbeat: now.Add(-age),
		}}
	}
	alive := func(string) Liveness { return LivenessAlive }
	dead := func(string) Liveness { return LivenessDead }
	unknown := func(string) Liveness { return LivenessUnknown }
	tests := []struct {
		name     string
		claim    claimView
		active   bool
		liveness func(string) Liveness
		want     bool
	}{
		{"fresh heartbeat, owner unknown", beat(other, time.Second), false, unknown, false},
		{"fresh heartbeat, owner alive", beat(other, time.Second), false, alive, false},
		{"fresh heartbeat, owner dead", beat(other, time.Second), false, dead, true},
		{"heartbeat just within the TTL", beat(other, ttl), false, unknown, false},
		{"heartbeat older than the TTL, owner unknown", beat(other, ttl+time.Millisecond), false, unknown, true},
		{"heartbeat older than the TTL, owner alive", beat(other, time.Minute), false, alive, true},
		{"this process, publishing", beat(self, time.Second), true, unknown, false},
		{"this process, left behind", beat(self, time.Second), false, unknown, true},
		{"no owner, fresh heartbeat", beat("", time.Second), false, dead, false},
		{"heartbeat from the future, recent write", claimView{valid: true, modTime: now.Add(-time.Second),
			doc: claimDoc{ID: "c1", Owner: other, Heartbeat: now.Add(time.Hour)}}, false, unknown, false},
		{"heartbeat from the future, old write", claimView{valid: true, modTime: now.Add(-time.Hour),
			doc: claimDoc{ID: "c1", Owner: other, Heartbeat: now.Add(time.Hour)}}, false, unknown, true},
		{"older jig-server, started 1 minute ago", claimView{valid: true, modTime: now.Add(-time.Minute),
			doc: claimDoc{ID: "c1", Started: now.Add(-time.Minute)}}, false, unknown, false},
		{"older jig-server, started 1 hour ago", claimView{valid: true, modTime: now.Add(-time.Hour),
			doc: claimDoc{ID: "c1", Started: now.Add(-time.Hour)}}, false, unknown, true},
		{"older jig-server, no start time, old write", claimView{valid: true, modTime: now.Add(-time.Hour),
			doc: claimDoc{ID: "c1"}}, false, unknown, true},
		{"unreadable, recently written", claimView{modTime: now.Add(-time.Second)}, false, dead, false},
		{"unreadable, older than the TTL", claimView{modTime: now.Add(-time.Minute)}, false, unknown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, reason := decide(tt.claim, now, ttl, legacy, self, tt.active, tt.liveness)
			if got != tt.want {
				t.Errorf("decide = %v (%s), want %v", got, reason, tt.want)
			}
		})
	}
}

func TestReadClaim(t *testing.T) {
	t.Parallel()
	info := storage.Info{ModTime: time.Unix(1e9, 0), ETag: `"e"`}
	tests := []struct {
		name, body string
		valid      bool
	}{
		{"current", `{"id":"a","owner":"o","started":"2026-01-01T00:00:00Z","heartbeat":"2026-01-01T00:00:10Z","seq":3}`, true},
		{"older jig-server", `{"id":"a","started":"2026-01-01T00:00:00Z"}`, true},
		{"no id", `{"owner":"o"}`, false},
		{"not JSON", "\x00\xffgarbage", false},
		{"wrong types", `{"id":1,"heartbeat":"yesterday"}`, false},
		{"empty", "", false},
		{"too large", `{"id":"a","pad":"` + strings.Repeat("x", maxClaimDoc) + `"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cv := readClaim(strings.NewReader(tt.body), info)
			if cv.valid != tt.valid || !cv.modTime.Equal(info.ModTime) || cv.etag != info.ETag {
				t.Errorf("readClaim = valid %v, modTime %v, etag %q; want valid %v and the storage's info", cv.valid, cv.modTime, cv.etag, tt.valid)
			}
		})
	}
}
