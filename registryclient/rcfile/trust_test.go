package rcfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

const (
	aliceKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
	bobKey   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJv0LoQqEG0t6xYrmQDa9lrVZ6gL8ifp4e2WkR1ZFeS"
)

// TestTrustRoundTrip: a trust policy set through SetTrust is saved with
// the entry, read back the same, and fields jig does not know (at the top
// and inside an entry) survive the save.
func TestTrustRoundTrip(t *testing.T) {
	t.Parallel()
	p := writeRC(t, `{"registries":{"@co":{"url":"https://co.example.com","x-extra":{"a":1}}},"other":true}`)
	on := true
	cfg, err := rcfile.Edit(t.Context(), p, func(c *rcfile.Config) error {
		if err := c.SetTrust("@co", rcfile.TrustUpdate{AddKey: aliceKey + " alice@laptop", AddPrincipal: "alice@example.com", Require: &on}); err != nil {
			return err
		}
		return c.SetTrust("@main", rcfile.TrustUpdate{AddKey: bobKey, AddPrincipal: "bob"})
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	for _, want := range []string{`"x-extra": {`, `"other": true`, `"require": true`, `"principal": "alice@example.com"`, `"key": "` + aliceKey + `"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("saved file lacks %s:\n%s", want, b)
		}
	}
	// @main got an entry of its own with the URL it uses: the reference
	// reads the same file and needs one (issue 36, N2).
	if !strings.Contains(string(b), `"url": "`+rcfile.DefaultRegistryURL) {
		t.Errorf("a built-in's entry was written without its URL:\n%s", b)
	}
	back, err := rcfile.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	tr := back.Trust("@co")
	if tr == nil || !tr.Require || len(tr.Keys) != 1 || tr.Keys[0].Key != aliceKey {
		t.Fatalf("read back %+v", tr)
	}
	// Removing the last key and require leaves no policy at all.
	off := false
	_, err = rcfile.Edit(t.Context(), p, func(c *rcfile.Config) error {
		if err := c.SetTrust("@co", rcfile.TrustUpdate{RemoveKey: aliceKey, Require: &off}); err != nil {
			return err
		}
		return c.RemoveTrust("@main")
	})
	if err != nil {
		t.Fatal(err)
	}
	back, _ = rcfile.Load(p)
	if back.Trust("@co") != nil || back.Trust("@main") != nil || back.HasOverride("@main") {
		t.Fatalf("after removal: %+v %+v %v", back.Trust("@co"), back.Trust("@main"), back.HasOverride("@main"))
	}
	if e, _ := back.Get("@co"); e.URL != "https://co.example.com" || cfg == nil {
		t.Fatalf("entry lost: %+v", e)
	}
}

// TestTrustInvalid: a malformed trust object is refused on load with a
// message naming the namespace and what is wrong.
func TestTrustInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ trust, want string }{
		{`"yes"`, `registry @co: "trust" must be an object`},
		{`{"keys":[{"principal":"alice","key":"ssh-ed25519 nope"}]}`, "registry @co: trust.keys[0] (alice): not an SSH public key"},
		{`{"keys":[{"principal":"","key":"` + aliceKey + `"}]}`, "registry @co: trust.keys[0]: the principal is empty"},
		{`{"keys":[{"principal":"a b","key":"` + aliceKey + `"}]}`, `principal "a b" may not contain spaces`},
		{`{"keys":[{"principal":"a","key":"` + aliceKey + `"},{"principal":"b","key":"` + aliceKey + `"}]}`, "lists key SHA256:"},
		{`{"require":"yes"}`, `"trust" must be an object`},
		{`{"requires":true}`, `unknown field "requires"`},
	} {
		p := writeRC(t, `{"registries":{"@co":{"url":"https://co.example.com","trust":`+tc.trust+`}}}`)
		_, err := rcfile.Load(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("trust %s: got %v, want %q", tc.trust, err, tc.want)
		}
	}
}

// TestTrustSetErrors: SetTrust refuses what it cannot do, saying how.
func TestTrustSetErrors(t *testing.T) {
	t.Parallel()
	c, _ := rcfile.Parse("/x/.jigrc", []byte(`{"registries":{"@co":"https://co.example.com"}}`))
	for _, tc := range []struct {
		ns   string
		u    rcfile.TrustUpdate
		want string
	}{
		{"@nowhere", rcfile.TrustUpdate{AddKey: aliceKey, AddPrincipal: "a"}, "registry @nowhere is not configured"},
		{"@co", rcfile.TrustUpdate{AddKey: "-----BEGIN OPENSSH PRIVATE KEY-----", AddPrincipal: "a"}, "this is a private key"},
		{"@co", rcfile.TrustUpdate{RemoveKey: "SHA256:nope"}, "@co trusts no inline key SHA256:nope (it has no inline keys)"},
	} {
		if err := c.SetTrust(tc.ns, tc.u); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: got %v, want %q", tc.ns, tc.u, err, tc.want)
		}
	}
	if err := c.SetTrust("@co", rcfile.TrustUpdate{AddKey: aliceKey, AddPrincipal: "alice"}); err != nil {
		t.Fatal(err)
	}
	var te *rcfile.TrustError
	if err := c.SetTrust("@nowhere", rcfile.TrustUpdate{AddKey: aliceKey, AddPrincipal: "a"}); !errors.As(err, &te) || te.Reason != rcfile.TrustNotConfigured || te.Namespace != "@nowhere" {
		t.Errorf("unconfigured: %#v", err)
	}
	if err := c.RemoveTrust("@nowhere"); !errors.As(err, &te) || te.Reason != rcfile.TrustNoPolicy || te.Namespace != "@nowhere" {
		t.Errorf("no policy: %#v", err)
	}
	if err := c.SetTrust("@co", rcfile.TrustUpdate{AddKey: aliceKey, AddPrincipal: "mallory"}); !errors.As(err, &te) || te.Reason != rcfile.TrustKeyTaken || te.Principal != "alice" || !strings.HasPrefix(te.Fingerprint, "SHA256:") ||
		!strings.Contains(err.Error(), "is already trusted for @co as alice") {
		t.Errorf("same key, other principal: %v", err)
	}
}

// TestTrustResolvePath: an allowedSigners path is resolved from the rc
// file's directory, or from the home directory for "~/".
func TestTrustResolvePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, ".jigrc")
	c, err := rcfile.Parse(p, []byte(`{"registries":{"@co":{"url":"https://co.example.com","trust":{"allowedSigners":"signers"}},"@h":{"url":"https://h.example.com","trust":{"allowedSigners":"~/s"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c.LookupEnv = func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/u", true
		}
		return "", false
	}
	for ns, want := range map[string]string{"@co": filepath.Join(dir, "signers"), "@h": "/home/u/s"} {
		e, err := c.Resolve(ns)
		if err != nil || e.Trust == nil || e.Trust.AllowedSigners != want {
			t.Errorf("%s: %+v %v, want %s", ns, e.Trust, err, want)
		}
	}
	// The stored form is kept.
	if tr := c.Trust("@co"); tr.AllowedSigners != "signers" {
		t.Errorf("stored: %q", tr.AllowedSigners)
	}
	_ = registryclient.Trust{}
}
