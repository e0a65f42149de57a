package rcfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/registry/signing"

	"github.com/jigkit/jig/registryclient"
)

// parseTrust decodes the "trust" object of namespace ns's entry; absent
// or null gives nil.
func parseTrust(ns string, raw json.RawMessage) (*registryclient.Trust, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var t registryclient.Trust
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf(`registry %s: "trust" must be an object {"allowedSigners": "<path>", "keys": [{"principal": "alice@example.com", "key": "ssh-ed25519 AAAA..."}], "require": true|false} (%v)`, ns, err)
	}
	if err := t.Check(ns); err != nil {
		return nil, err
	}
	return &t, nil
}

// Trust returns the signing policy of namespace ns as stored (nil when
// it has none). The returned policy is a copy.
func (c *Config) Trust(ns string) *registryclient.Trust {
	e, ok := c.Get(ns)
	if !ok {
		return nil
	}
	return e.Trust
}

// TrustReason says why [*Config.SetTrust] or [*Config.RemoveTrust]
// refused a change to a signing policy.
type TrustReason int

const (
	// TrustNotConfigured: the namespace is neither built in nor an entry
	// of the file, so it has no policy to change; configure its URL first.
	TrustNotConfigured TrustReason = iota + 1
	// TrustKeyTaken: the key is already trusted under another principal
	// ([TrustError.Principal]); remove it before adding it again.
	TrustKeyTaken
	// TrustNoPolicy: the namespace has no policy to remove.
	TrustNoPolicy
)

// TrustError is a change to a namespace's signing policy that the
// configuration refuses; Reason says why.
type TrustError struct {
	Reason    TrustReason
	Namespace string
	// Fingerprint ("SHA256:…") and Principal name the key already
	// trusted, for [TrustKeyTaken].
	Fingerprint, Principal string
}

func (e *TrustError) Error() string {
	switch e.Reason {
	case TrustKeyTaken:
		return fmt.Sprintf("key %s is already trusted for %s as %s", e.Fingerprint, e.Namespace, e.Principal)
	case TrustNoPolicy:
		return fmt.Sprintf("%s has no trust policy to remove", e.Namespace)
	}
	return fmt.Sprintf("registry %s is not configured", e.Namespace)
}

// TrustUpdate is a change to a namespace's signing policy for
// [*Config.SetTrust]. Nil fields keep the current value.
type TrustUpdate struct {
	// AddKey adds a trusted key under AddPrincipal.
	AddKey       string
	AddPrincipal string
	// RemoveKey removes the key given by its fingerprint
	// ("SHA256:...") or its public key.
	RemoveKey string
	// AllowedSigners sets the allowed_signers path; "" removes it.
	AllowedSigners *string
	// Require sets whether unsigned versions are refused.
	Require *bool
	// Log sets the verifier line of the namespace's transparency log
	// key; "" removes it.
	Log *string
	// Witnesses sets the log's witnesses (verifier keys) and
	// MinWitnesses how many must cosign each checkpoint; an empty list
	// and 0 remove the requirement.
	Witnesses    *[]string
	MinWitnesses *int
}

// SetTrust changes the signing policy of namespace ns, which must be
// configured (a built-in, or an entry of the file). A policy left empty is
// removed. Nothing is written until [*Config.Save].
func (c *Config) SetTrust(ns string, u TrustUpdate) error {
	if err := ValidateNamespaceArg(ns); err != nil {
		return err
	}
	e, exists := c.entries[ns]
	if !exists && !IsBuiltin(ns) {
		return &TrustError{Reason: TrustNotConfigured, Namespace: ns}
	}
	t := e.Trust.Clone()
	if t == nil {
		t = &registryclient.Trust{}
	}
	if u.AddKey != "" || u.AddPrincipal != "" {
		if err := registryclient.CheckPrincipal(u.AddPrincipal); err != nil {
			return err
		}
		pk, err := registryclient.ParsePublicKey(u.AddKey)
		if err != nil {
			return err
		}
		fp := signing.Fingerprint(pk)
		dup := false
		for _, k := range t.Keys {
			if have, err := registryclient.ParsePublicKey(k.Key); err == nil && signing.Fingerprint(have) == fp {
				if k.Principal != u.AddPrincipal {
					return &TrustError{Reason: TrustKeyTaken, Namespace: ns, Fingerprint: fp, Principal: k.Principal}
				}
				dup = true
			}
		}
		if !dup {
			t.Keys = append(t.Keys, registryclient.TrustedKey{Principal: u.AddPrincipal, Key: signing.FormatPublicKey(pk)})
		}
	}
	if u.RemoveKey != "" {
		want := strings.TrimSpace(u.RemoveKey)
		if !strings.HasPrefix(want, "SHA256:") {
			pk, err := registryclient.ParsePublicKey(want)
			if err != nil {
				return fmt.Errorf("--key must be a fingerprint (SHA256:...) or a public key: %w", err)
			}
			want = signing.Fingerprint(pk)
		}
		n := len(t.Keys)
		var have []string
		for i := 0; i < len(t.Keys); i++ {
			pk, err := registryclient.ParsePublicKey(t.Keys[i].Key)
			if err != nil {
				continue
			}
			fp := signing.Fingerprint(pk)
			if fp == want {
				t.Keys = append(t.Keys[:i], t.Keys[i+1:]...)
				i--
				continue
			}
			have = append(have, fp+" ("+t.Keys[i].Principal+")")
		}
		if len(t.Keys) == n {
			if len(have) == 0 {
				return fmt.Errorf("%s trusts no inline key %s (it has no inline keys)", ns, want)
			}
			return fmt.Errorf("%s trusts no inline key %s; its keys: %s", ns, want, strings.Join(have, ", "))
		}
	}
	if u.AllowedSigners != nil {
		p := strings.TrimSpace(*u.AllowedSigners)
		t.AllowedSigners = p
	}
	if u.Require != nil {
		t.Require = *u.Require
	}
	if u.Log != nil {
		t.Log = strings.TrimSpace(*u.Log)
	}
	if u.Witnesses != nil {
		t.Witnesses = nil
		for _, w := range *u.Witnesses {
			t.Witnesses = append(t.Witnesses, strings.TrimSpace(w))
		}
	}
	if u.MinWitnesses != nil {
		t.MinWitnesses = *u.MinWitnesses
	}
	if err := t.Check(ns); err != nil {
		return err
	}
	if t.Empty() {
		t = nil
	}
	if !exists {
		// A built-in gets a file entry with the URL it uses now (see
		// [*Config.Set]).
		e = entry{}
		e.URL = c.builtinURL
	}
	e.Trust = t
	e.short = false
	c.entries[ns] = e
	return nil
}

// RemoveTrust deletes the whole signing policy of ns. A namespace without
// one is an error.
func (c *Config) RemoveTrust(ns string) error {
	if err := ValidateNamespaceArg(ns); err != nil {
		return err
	}
	e, ok := c.entries[ns]
	if !ok || e.Trust == nil {
		return &TrustError{Reason: TrustNoPolicy, Namespace: ns}
	}
	e.Trust = nil
	if (e.URL == "" || e.URL == c.builtinURL) && e.Token == "" && len(e.Headers) == 0 && e.DefaultNamespace == "" && len(e.other) == 0 && IsBuiltin(ns) {
		delete(c.entries, ns)
		return nil
	}
	c.entries[ns] = e
	return nil
}

// trustPath resolves an allowedSigners path as the rc file means it:
// "~/" from the home directory, a relative path from the rc file's
// directory.
func (c *Config) trustPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := homeDir(c.LookupEnv)
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[min(len(p), 2):])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(c.path), p)
	}
	return filepath.Clean(p), nil
}

func homeDir(lookup func(string) (string, bool)) (string, error) {
	if lookup != nil {
		if h, ok := lookup("HOME"); ok && filepath.IsAbs(h) {
			return h, nil
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h, nil
	}
	return "", errors.New("trust.allowedSigners starts with ~/ but no home directory is known; give an absolute path")
}
