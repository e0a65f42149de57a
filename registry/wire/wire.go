package wire

// Error is the body of every error response.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// Namespaces is the body of GET /namespaces: the namespaces the caller may
// read, sorted.
type Namespaces struct {
	Namespaces []string `json:"namespaces"`
	// DefaultNamespace is the namespace that shorthand identifiers
	// ("runtimes/node") in this server's presets and manifests mean, e.g.
	// "@rack" for a storage written for the reference. It is sent only
	// when the server is configured with one and the caller may read it;
	// otherwise it is absent and clients use their own default (jig's is
	// "@main"). The reference's clients ignore it.
	DefaultNamespace string `json:"defaultNamespace,omitempty"`
}

// Registries is the body of GET /namespaces/:ns/registries: the registry
// paths ("runtimes/node") under the namespace, sorted.
type Registries struct {
	Namespace  string   `json:"namespace"`
	Registries []string `json:"registries"`
}

// VersionList is the body of GET /registries/@ns/<path>/versions, stored as
// versions.json: every published version, newest first. registry.VersionList
// adds its methods.
type VersionList struct {
	Versions []string `json:"versions"`
}

// The multipart/form-data fields of POST /registries.
const (
	// FormFile is the file part: the package as a .tar.gz.
	FormFile = "file"
	// FormChecksum is the field holding the hex SHA-256 of the file part.
	FormChecksum = "checksum"
	// FormSignature is a field holding one armored SSH signature
	// ("-----BEGIN SSH SIGNATURE-----") over the version's canonical
	// digest index, in namespace "jig-registry" (package
	// registry/signing). It may be repeated, up to [MaxSignatures] times;
	// the reference server ignores it.
	FormSignature = "signature"
)

// MaxSignatures is the most [FormSignature] fields one upload may carry.
const MaxSignatures = 16

// Signatures is the body of GET /registries/@ns/<path>/<version>/signatures:
// the signatures stored with the version, in upload order, and the
// document jig-server stores beside the version. Signatures is empty (not
// absent) for an unsigned version.
type Signatures struct {
	Namespace  string          `json:"namespace"`
	Path       string          `json:"path"`
	Version    string          `json:"version"`
	Signatures []SignatureInfo `json:"signatures"`
}

// SignatureInfo is one signature of a version.
type SignatureInfo struct {
	// Signature is the armored SSH signature, as registry/signing's
	// Signature.Armored.
	Signature string `json:"signature"`
	// Key is the signing public key, "ssh-ed25519 AAAA...", and
	// Fingerprint its "SHA256:..." fingerprint.
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	// Principal is who the server's signer file for the namespace says
	// holds the key ("alice@example.com"); empty (and absent) when the
	// server has no signer file naming the key. It is the server's word,
	// not part of what is signed.
	Principal string `json:"principal,omitempty"`
}

// UploadResult is the body of a successful (201) POST /registries or POST
// /presets.
type UploadResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Namespace is the registry's namespace ("@acme"); empty (and absent)
	// for a preset.
	Namespace string `json:"namespace,omitempty"`
	Message   string `json:"message"`
	// Path is "@ns/<seg>…/<version>" for a registry and
	// "presets/<name>/<version>" for a preset.
	Path string `json:"path"`
}

// The values of [Health.Status] and [HealthCheck.Status].
const (
	StatusOK    = "ok"
	StatusError = "error"
	// StatusDegraded: the registries are served, a part that is not
	// needed for that (the state database) fails.
	StatusDegraded = "degraded"
)

// Health is the body of GET /health: [StatusOK] or [StatusDegraded]
// with 200, [StatusError] with 503.
type Health struct {
	Status string `json:"status"`
	// Checks are keyed by check name; the server sends "storage" and
	// "database".
	Checks map[string]HealthCheck `json:"checks,omitempty"`
}

// HealthCheck is one check of a [Health] report.
type HealthCheck struct {
	Status string `json:"status"`
	// Error says why the check failed; it is empty when it passed.
	Error string `json:"error,omitempty"`
}
