package wire

// Code is the machine-readable "code" of an error response. Its values are
// the constants below; a server may send codes this package does not know,
// which clients treat as a plain failure of the status.
type Code string

// Error codes. The comment names the status they are sent with.
const (
	// Requests and paths.
	CodeBadRequest       Code = "BAD_REQUEST"        // 400, a generic bad request
	CodeInvalidPath      Code = "INVALID_PATH"       // 400, a malformed /registries/… path
	CodeInvalidNamespace Code = "INVALID_NAMESPACE"  // 400, a namespace breaking the grammar
	CodeInvalidPreset    Code = "INVALID_PRESET"     // 400, a preset name breaking the grammar
	CodeNotFound         Code = "NOT_FOUND"          // 404, no such route, registry, version, file or preset
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED" // 405
	CodeInvalidQuery     Code = "INVALID_QUERY"      // 400, a bad /search or listing query
	CodeQueryTooLong     Code = "QUERY_TOO_LONG"     // 400, a /search query over its length limit
	// CodeNamespaceNotFound is sent with 404 for a namespace that holds nothing.
	CodeNamespaceNotFound Code = "NAMESPACE_NOT_FOUND"

	// Authentication and access.
	CodeUnauthorized       Code = "UNAUTHORIZED"        // 401, a token is required
	CodeInvalidToken       Code = "INVALID_TOKEN"       // 401, the token is not known
	CodeTokenExpired       Code = "TOKEN_EXPIRED"       // 401, the token has expired
	CodeForbidden          Code = "FORBIDDEN"           // 403, a generic refusal
	CodeForbiddenNamespace Code = "FORBIDDEN_NAMESPACE" // 403, the token may not read the namespace

	// Publishing (POST /registries, POST /presets).
	CodeMissingFile         Code = "MISSING_FILE"               // 400, no file part in the form
	CodeInvalidFileType     Code = "INVALID_FILE_TYPE"          // 400, the file part is not a tar.gz
	CodeMissingChecksum     Code = "MISSING_CHECKSUM"           // 400, no checksum field
	CodeChecksumMismatch    Code = "CHECKSUM_MISMATCH"          // 400, the checksum does not match the file
	CodeInvalidArchive      Code = "INVALID_ARCHIVE"            // 400, not a readable tar.gz
	CodeUploadFailed        Code = "UPLOAD_FAILED"              // 400, the package is wrong (message says how)
	CodeSchemaValidation    Code = "SCHEMA_VALIDATION_FAILED"   // 400, registry.json or preset.json breaks its schema
	CodeFileNotFound        Code = "FILE_NOT_FOUND"             // 400, a declared file is missing from the archive
	CodeUnsafeFile          Code = "UNSAFE_FILE"                // 400, a link, device or escaping path
	CodeUndeclaredFile      Code = "UNDECLARED_FILE"            // 400, a file registry.json does not declare
	CodeNamespaceNotAllowed Code = "NAMESPACE_NOT_ALLOWED"      // 403, publishing into the namespace is not allowed
	CodeAnonymousUpload     Code = "ANONYMOUS_UPLOAD_FORBIDDEN" // 403, publishing needs a token
	CodeInsufficientPerms   Code = "INSUFFICIENT_PERMISSIONS"   // 403, the token may not publish here
	CodeVersionExists       Code = "VERSION_EXISTS"             // 409, the version is already published
	CodePayloadTooLarge     Code = "PAYLOAD_TOO_LARGE"          // 413, the body exceeds a limit

	// Operations.
	CodeRequestTimeout    Code = "REQUEST_TIMEOUT"       // 408, the request body arrived too slowly
	CodeTooManyUploads    Code = "TOO_MANY_UPLOADS"      // 503, too many uploads in progress
	CodeRateLimitExceeded Code = "RATE_LIMIT_EXCEEDED"   // 429, with Retry-After
	CodeInternal          Code = "INTERNAL_SERVER_ERROR" // 500, the cause is only logged
	CodeHTTPError         Code = "HTTP_ERROR"            // any other status
)

// Auth reports whether c says the request's credentials are missing or
// not good enough (UNAUTHORIZED, INVALID_TOKEN, TOKEN_EXPIRED,
// INSUFFICIENT_PERMISSIONS, ANONYMOUS_UPLOAD_FORBIDDEN): a different token
// would help.
func (c Code) Auth() bool {
	switch c {
	case CodeUnauthorized, CodeInvalidToken, CodeTokenExpired, CodeInsufficientPerms, CodeAnonymousUpload:
		return true
	}
	return false
}

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
