package registryserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestMirrorPolicyRefusal (issue 36 item 24): a version the mirror's
// signing policy refuses is a permanent 403 with the code table's code,
// never "try again later", and is not listed (versions list and latest). A
// failure to fetch its signatures is not taken for a refusal, a reloaded
// policy judges again, and a caller who may not read a gated namespace
// cannot tell a refused version from an absent one.
func TestMirrorPolicyRefusal(t *testing.T) {
	t.Parallel()
	alice, bob := newSigner(t), newSigner(t)
	up := publishHandler(t, memory.New())
	// @public/features/ui-kit: 1.0.0 by alice, 2.0.0 by bob, 3.0.0 unsigned.
	for _, v := range []struct {
		version string
		by      any
	}{{"1.0.0", alice}, {"2.0.0", bob}, {"3.0.0", nil}} {
		archive := pkg(regJSON("@public", v.version, ""))
		var sigs [][]byte
		if v.by == alice {
			sigs = append(sigs, sign(t, alice, digestsOf(t, archive)))
		} else if v.by == bob {
			sigs = append(sigs, sign(t, bob, digestsOf(t, archive)))
		}
		if r := postSigned(t, up, pubAdmin, archive, sigs...); r.status != 201 {
			t.Fatalf("publish %s: %d %s", v.version, r.status, r.body)
		}
	}
	var fail atomic.Bool // the upstream fails every signatures request
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/2.0.0") {
			asked.Add(1)
		}
		if fail.Load() && strings.HasSuffix(r.URL.Path, "/signatures") {
			http.Error(w, `{"code":"FORBIDDEN","message":"no"}`, http.StatusForbidden)
			return
		}
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	aliceOnly, err := registryserver.LoadSigners(signersDir(t, map[string]string{
		"public.allowed_signers": "alice@example.com " + signing.FormatPublicKey(alice.PublicKey()),
	}))
	if err != nil {
		t.Fatal(err)
	}
	const ui = "/registries/@public/features/ui-kit"
	mirror := func(t *testing.T, opts ...registryserver.Option) *registryserver.Handler {
		m := newMirror(t, memory.New(), srv.URL, `{"@public":"@public"}`, append([]registryserver.Option{registryserver.WithMutableTTL(0)}, opts...)...)
		m.SetSigners(aliceOnly)
		return m
	}

	t.Run("refused", func(t *testing.T) {
		m := mirror(t)
		if r := fetch(t, m, ui+"/versions", ""); r.status != 200 || listed(r) != "1.0.0" {
			t.Errorf("versions: got %d %s, want 1.0.0 alone", r.status, r.body)
		}
		var man struct{ Version string }
		if r := fetch(t, m, ui, ""); r.status != 200 || json.Unmarshal(r.body, &man) != nil || man.Version != "1.0.0" {
			t.Errorf("latest: got %d %s, want 1.0.0", r.status, r.body)
		}
		for _, tc := range []struct{ version, says string }{{"2.0.0", "no signature of it is by a listed key"}, {"3.0.0", "it has no signature"}} {
			for range 2 {
				r := fetch(t, m, ui+"/"+tc.version, "")
				if r.status != 403 || wireCode(r.body) != "SIGNATURE_INVALID" || !strings.Contains(string(r.body), tc.says) ||
					strings.Contains(string(r.body), "try again") || r.header.Get("Cache-Control") != "no-store" {
					t.Errorf("GET %s: got %d %s (%s), want 403 SIGNATURE_INVALID saying %q", tc.version, r.status, r.body, r.header.Get("Cache-Control"), tc.says)
				}
			}
		}
		// Judged once: asking again does not reach the upstream.
		n := asked.Load()
		fetch(t, m, ui+"/2.0.0", "")
		fetch(t, m, ui+"/2.0.0/files/templates/a.txt", "")
		if got := asked.Load(); got != n {
			t.Errorf("a refused version was asked of the upstream again (%d requests)", got-n)
		}
		// Another policy judges again: with bob listed, 2.0.0 is served.
		both, err := registryserver.LoadSigners(signersDir(t, map[string]string{
			"public.allowed_signers": "alice@example.com " + signing.FormatPublicKey(alice.PublicKey()) + "\nbob@example.com " + signing.FormatPublicKey(bob.PublicKey()),
		}))
		if err != nil {
			t.Fatal(err)
		}
		m.SetSigners(both)
		if r := fetch(t, m, ui+"/2.0.0", ""); r.status != 200 {
			t.Errorf("2.0.0 once bob is listed: got %d %s", r.status, r.body)
		}
		if r := fetch(t, m, ui+"/versions", ""); listed(r) != "2.0.0,1.0.0" {
			t.Errorf("versions once bob is listed: %s", r.body)
		}
	})

	t.Run("transient", func(t *testing.T) {
		m := mirror(t)
		fail.Store(true)
		// The signatures cannot be fetched: unknown, so listed, and a
		// read is 504, not a refusal.
		if r := fetch(t, m, ui+"/versions", ""); listed(r) != "3.0.0,2.0.0,1.0.0" {
			t.Errorf("versions while signatures fail: %s", r.body)
		}
		if r := fetch(t, m, ui+"/3.0.0", ""); r.status != 504 || wireCode(r.body) != "UPSTREAM_UNAVAILABLE" {
			t.Errorf("3.0.0 while signatures fail: got %d %s, want 504", r.status, r.body)
		}
		fail.Store(false)
		if r := fetch(t, m, ui+"/3.0.0", ""); r.status != 403 {
			t.Errorf("3.0.0 once the upstream answers: got %d %s, want 403", r.status, r.body)
		}
	})

	t.Run("gated", func(t *testing.T) {
		auth, err := registryserver.ParseAuthConfig([]byte(`{"@public": [{"token": "reader-token"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		m := mirror(t, registryserver.WithAuth(auth))
		if r := fetch(t, m, ui+"/2.0.0", "reader-token"); r.status != 403 {
			t.Fatalf("a reader: got %d %s, want 403", r.status, r.body)
		}
		for _, token := range []string{"", "wrong-token"} {
			refused, absent := fetch(t, m, ui+"/2.0.0", token), fetch(t, m, ui+"/9.9.9", token)
			if refused.status != absent.status || string(refused.body) != string(absent.body) || refused.status/100 != 4 || refused.status == 403 {
				t.Errorf("token %q: refused %d %s, absent %d %s; want the same 401", token, refused.status, refused.body, absent.status, absent.body)
			}
		}
		other := fetch(t, m, "/registries/@other/features/ui-kit/2.0.0", "")
		if other.status == 403 && wireCode(other.body) == "SIGNATURE_INVALID" {
			t.Errorf("an undeclared namespace answered %d %s", other.status, other.body)
		}
	})
}

// listed returns the versions of a versions list reply, comma-separated.
func listed(r reply) string {
	var vl struct{ Versions []string }
	if err := json.Unmarshal(r.body, &vl); err != nil {
		return "not a versions list: " + string(r.body)
	}
	return strings.Join(vl.Versions, ",")
}
