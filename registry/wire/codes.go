package wire

import "net/http"

// Code is the machine-readable "code" of an error response. Its values are
// the constants below; a server may send codes this package does not know,
// which clients treat as a plain failure of the status.
type Code string

// Error codes. [Code.Status] gives the status each is sent with; the
// table in codes.go is the one place that pairs them.
const (
	// Requests and paths.
	CodeBadRequest        Code = "BAD_REQUEST"
	CodeInvalidPath       Code = "INVALID_PATH"
	CodeInvalidNamespace  Code = "INVALID_NAMESPACE"
	CodeInvalidPreset     Code = "INVALID_PRESET"
	CodeNotFound          Code = "NOT_FOUND"
	CodeMethodNotAllowed  Code = "METHOD_NOT_ALLOWED"
	CodeInvalidQuery      Code = "INVALID_QUERY"
	CodeQueryTooLong      Code = "QUERY_TOO_LONG"
	CodeNamespaceNotFound Code = "NAMESPACE_NOT_FOUND"
	// CodeNotWitnessed: a transparency-log lookup that requires k
	// witnesses (?witnesses=k) names a version that is in the log, beyond
	// the newest tree head k witnesses cosigned.
	CodeNotWitnessed Code = "NOT_WITNESSED"

	// Authentication and access.
	CodeUnauthorized       Code = "UNAUTHORIZED"
	CodeInvalidToken       Code = "INVALID_TOKEN"
	CodeTokenExpired       Code = "TOKEN_EXPIRED"
	CodeForbidden          Code = "FORBIDDEN"
	CodeForbiddenNamespace Code = "FORBIDDEN_NAMESPACE"
	// CodeIssuerUnavailable: the request carried an OIDC token of a
	// trusted issuer whose discovery document or keys could not be
	// fetched; the token is refused, nothing is opened. Retry later.
	CodeIssuerUnavailable Code = "ISSUER_UNAVAILABLE"

	// Publishing (POST /registries, POST /presets).
	CodeMissingFile         Code = "MISSING_FILE"
	CodeInvalidFileType     Code = "INVALID_FILE_TYPE"
	CodeMissingChecksum     Code = "MISSING_CHECKSUM"
	CodeChecksumMismatch    Code = "CHECKSUM_MISMATCH"
	CodeInvalidArchive      Code = "INVALID_ARCHIVE"
	CodeUploadFailed        Code = "UPLOAD_FAILED"
	CodeSchemaValidation    Code = "SCHEMA_VALIDATION_FAILED"
	CodeFileNotFound        Code = "FILE_NOT_FOUND"
	CodeUnsafeFile          Code = "UNSAFE_FILE"
	CodeUndeclaredFile      Code = "UNDECLARED_FILE"
	CodeNamespaceNotAllowed Code = "NAMESPACE_NOT_ALLOWED"
	CodeAnonymousUpload     Code = "ANONYMOUS_UPLOAD_FORBIDDEN"
	CodeInsufficientPerms   Code = "INSUFFICIENT_PERMISSIONS"
	CodeVersionExists       Code = "VERSION_EXISTS"
	CodePayloadTooLarge     Code = "PAYLOAD_TOO_LARGE"
	CodePublishInterrupted  Code = "PUBLISH_INTERRUPTED"
	CodeSignatureRequired   Code = "SIGNATURE_REQUIRED"
	CodeSignatureInvalid    Code = "SIGNATURE_INVALID"

	// Census (POST /census/@ns).
	CodeInvalidReport Code = "INVALID_REPORT"
	CodeCensusFull    Code = "CENSUS_FULL"
	// CodeCensusQuota: the reporter (a token) already sent the reports of
	// as many projects of the namespace as one reporter may.
	CodeCensusQuota Code = "CENSUS_QUOTA"
	// CodeCensusNotYourProject: a report sent with an OIDC identity
	// token names a project that is not the token's repository, or would
	// replace a project's verified entry without being verified by the
	// same issuer.
	CodeCensusNotYourProject Code = "CENSUS_NOT_YOUR_PROJECT"
	// CodeStateUnavailable: the state database (census, audit log) does
	// not answer; registry reads are not affected.
	CodeStateUnavailable Code = "STATE_UNAVAILABLE"

	// Operations.
	CodeRequestTimeout    Code = "REQUEST_TIMEOUT"
	CodeTooManyUploads    Code = "TOO_MANY_UPLOADS"
	CodeRateLimitExceeded Code = "RATE_LIMIT_EXCEEDED"
	// CodeUpstreamUnavailable: a mirror could not get a version it never
	// stored from its upstream (down, too slow, or its answer failed
	// verification).
	CodeUpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	CodeInternal            Code = "INTERNAL_SERVER_ERROR"
	CodeHTTPError           Code = "HTTP_ERROR"
)

// codes is the table of every code this package knows: the status it is
// sent with and what it means (docs/http-api.md's error table says the same, and
// a test holds them together). A status of 0 means the code stands for
// whatever status it came with.
var codes = []struct {
	code    Code
	status  int
	meaning string
}{
	{CodeBadRequest, http.StatusBadRequest, "a generic bad request"},
	{CodeInvalidPath, http.StatusBadRequest, "a malformed /registries/… path"},
	{CodeInvalidNamespace, http.StatusBadRequest, "a namespace breaking the grammar"},
	{CodeInvalidPreset, http.StatusBadRequest, "a preset name breaking the grammar"},
	{CodeInvalidQuery, http.StatusBadRequest, "a bad /search, listing or /audit query"},
	{CodeQueryTooLong, http.StatusBadRequest, "a /search query over its length limit"},
	{CodeNotFound, http.StatusNotFound, "no such route, registry, version, file, preset or schema"},
	{CodeNamespaceNotFound, http.StatusNotFound, "a namespace that is neither stored nor declared"},
	{CodeMethodNotAllowed, http.StatusMethodNotAllowed, "the route does not take this method"},
	{CodeNotWitnessed, http.StatusConflict, "a log lookup requiring k witnesses names a version logged after the newest tree head k witnesses cosigned"},

	{CodeUnauthorized, http.StatusUnauthorized, "a token is required"},
	{CodeInvalidToken, http.StatusUnauthorized, "the token is not known"},
	{CodeTokenExpired, http.StatusUnauthorized, "the token has expired"},
	{CodeForbidden, http.StatusForbidden, "a generic refusal"},
	{CodeForbiddenNamespace, http.StatusForbidden, "the token may not read the namespace"},
	{CodeIssuerUnavailable, http.StatusServiceUnavailable, "the OIDC issuer of the token could not be reached to check it; the token is refused, retry later"},

	{CodeMissingFile, http.StatusBadRequest, "no file part in the upload form"},
	{CodeInvalidFileType, http.StatusBadRequest, "the file part is not a tar.gz"},
	{CodeMissingChecksum, http.StatusBadRequest, "no checksum field"},
	{CodeChecksumMismatch, http.StatusBadRequest, "the checksum does not match the file"},
	{CodeInvalidArchive, http.StatusBadRequest, "not a readable tar.gz, or over the archive's limits"},
	{CodeUploadFailed, http.StatusBadRequest, "the package or the request body is wrong (the message says how)"},
	{CodeSchemaValidation, http.StatusBadRequest, "registry.json or preset.json breaks its schema"},
	{CodeFileNotFound, http.StatusBadRequest, "a declared file is missing from the archive"},
	{CodeUnsafeFile, http.StatusBadRequest, "a link, device, reserved name or escaping path"},
	{CodeUndeclaredFile, http.StatusBadRequest, "a file registry.json does not declare"},
	{CodeNamespaceNotAllowed, http.StatusForbidden, "publishing into the namespace is not allowed"},
	{CodeAnonymousUpload, http.StatusForbidden, "publishing into a public namespace needs the admin token"},
	{CodeInsufficientPerms, http.StatusForbidden, "the token may not publish here, or may not read the census (the message names the right)"},
	{CodeVersionExists, http.StatusConflict, "the version is already published"},
	{CodePayloadTooLarge, http.StatusRequestEntityTooLarge, "the body exceeds a limit: a request's, or a stored document the server would send (a signatures document over 1 MiB, any document over 8 MiB)"},
	{CodePublishInterrupted, http.StatusServiceUnavailable, "the publish stalled and another server took it over; nothing was published, publish again"},
	{CodeSignatureRequired, http.StatusBadRequest, "the namespace requires signed versions and the upload has no signature field"},
	{CodeSignatureInvalid, http.StatusForbidden, "a signature does not verify over the version's digest index, or none is by a key the namespace's signer file lists (an upload, or a version a mirror's signing policy refuses: never served)"},

	{CodeInvalidReport, http.StatusBadRequest, "a census report that is not JSON or breaks its limits (the message says which)"},
	{CodeCensusFull, http.StatusInsufficientStorage, "the namespace holds as many census projects as the server keeps; older reports make room as they expire"},
	{CodeCensusNotYourProject, http.StatusForbidden, "the report's project is not the identity token's repository, or its entry was verified and this report is not verified by the same issuer"},
	{CodeCensusQuota, http.StatusTooManyRequests, "the token already reported as many projects of the namespace as one reporter may; other reporters are not affected"},
	{CodeStateUnavailable, http.StatusServiceUnavailable, "the state database (census, audit log) does not answer; registry reads keep working"},

	{CodeRequestTimeout, http.StatusRequestTimeout, "the request body arrived too slowly"},
	{CodeTooManyUploads, http.StatusServiceUnavailable, "too many uploads in progress, with Retry-After"},
	{CodeRateLimitExceeded, http.StatusTooManyRequests, "too many requests, with Retry-After"},
	{CodeUpstreamUnavailable, http.StatusGatewayTimeout, "a mirror could not fetch a version it never stored from its upstream (down, too slow, or its answer failed verification)"},
	{CodeInternal, http.StatusInternalServerError, "the cause is only logged"},
	{CodeHTTPError, 0, "any other status"},
}

// statusOf indexes codes.
var statusOf = func() map[Code]int {
	m := make(map[Code]int, len(codes))
	for _, r := range codes {
		m[r.code] = r.status
	}
	return m
}()

// Status returns the HTTP status c is sent with, or 0 for [CodeHTTPError]
// and codes this package does not know.
func (c Code) Status() int { return statusOf[c] }

// genericCodes are the codes that stand for their status alone, in the
// order [CodeForStatus] tries them.
var genericCodes = []Code{
	CodeBadRequest, CodeUnauthorized, CodeForbidden, CodeNotFound, CodeMethodNotAllowed,
	CodePayloadTooLarge, CodeRateLimitExceeded, CodeInternal,
}

// CodeForStatus returns the generic code of an HTTP status that has no
// more specific one (BAD_REQUEST for 400, INTERNAL_SERVER_ERROR for 500,
// ...), or [CodeHTTPError].
func CodeForStatus(status int) Code {
	for _, c := range genericCodes {
		if c.Status() == status {
			return c
		}
	}
	return CodeHTTPError
}

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
