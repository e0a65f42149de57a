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
)

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
)

// Health is the body of GET /health: [StatusOK] with 200, [StatusError]
// with 503.
type Health struct {
	Status string `json:"status"`
	// Checks are keyed by check name; the server sends "storage".
	Checks map[string]HealthCheck `json:"checks,omitempty"`
}

// HealthCheck is one check of a [Health] report.
type HealthCheck struct {
	Status string `json:"status"`
	// Error says why the check failed; it is empty when it passed.
	Error string `json:"error,omitempty"`
}
