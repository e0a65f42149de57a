package registryserver

import (
	"crypto/rand"
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/internal/publish"
)

// WithLogKey keeps a transparency log of published versions, signed by
// skey: a note signer key ("PRIVATE+KEY+<name>+<hash>+<key>", as
// [GenerateLogKey] makes; jig-server reads it from the LOG_KEY file).
// Every version stored (publish, mirror fetch, bundle import) appends a
// record to its namespace's log before it is listed, and the routes
// GET /log/key, /log/@ns/checkpoint, /log/@ns/tile/… and
// /log/lookup/@ns/<path>@<version> serve the logs. The default is no log.
func WithLogKey(skey string) Option {
	return func(o *options) error {
		if _, _, err := publish.NewLogSigner(skey); err != nil {
			return err
		}
		o.logKey = skey
		return nil
	}
}

// WithWitnesses accepts the cosignatures of these witnesses on the
// transparency logs' checkpoints: vkeys are their C2SP tlog-cosignature
// (cosignature/v1, Ed25519) verifier keys, "<name>+<key ID>+<key>", as
// `jig log witness keygen` prints them (jig-server reads them from the
// LOG_WITNESSES file, one a line). A witness submits its cosignature of a
// checkpoint the server signed with POST /log/@ns/cosignature; the newest
// of each witness is kept in the storage, and GET /log/@ns/checkpoint
// (and every lookup's proof) carries those of exactly the current tree.
// At most [translog.MaxWitnesses], none twice; it needs [WithLogKey].
// The default is no witnesses: the cosignature route answers 404.
func WithWitnesses(vkeys ...string) Option {
	return func(o *options) error {
		p, err := translog.NewWitnessPolicy(vkeys, len(vkeys))
		if err != nil {
			return err
		}
		o.witnesses = p.Witnesses
		return nil
	}
}

// GenerateLogKey makes a new log key named name (a host name such as
// "registry.example.com", which every checkpoint's origin line starts
// with) and returns the signer key (the secret, for LOG_KEY) and its
// verifier line (public: clients trust it with `jig trust log add`).
func GenerateLogKey(name string) (skey, vkey string, err error) {
	skey, vkey, err = note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", "", fmt.Errorf("log key name %q: want a name without spaces or +, such as registry.example.com: %w", name, err)
	}
	return skey, vkey, nil
}

// LogVerifier returns the verifier line of the server's log key, "" when
// it keeps no log ([WithLogKey]).
func (h *Handler) LogVerifier() string { return h.logVerifier }

// LogOrigin returns the origin line of namespace ns's log checkpoints,
// "" when the server keeps no log.
func (h *Handler) LogOrigin(ns string) string {
	if h.logVerifier == "" || !registry.ValidNamespace(ns) {
		return ""
	}
	v, err := note.NewVerifier(h.logVerifier)
	if err != nil {
		return ""
	}
	return v.Name() + "/" + ns
}
