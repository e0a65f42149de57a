package translog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jigkit/jig/registry"
)

// Limits of a batch lookup (POST /log/lookup), so that one request's
// cost stays bounded.
const (
	// MaxBatchVersions is the most versions one batch lookup names.
	MaxBatchVersions = 256
	// MaxBatchBytes is the largest batch lookup request body.
	MaxBatchBytes = 64 << 10
)

// VersionID is one version a log can hold: "@ns/<path>@<version>".
type VersionID struct {
	Namespace, Path, Version string
}

// String returns "@ns/<path>@<version>", the form [ParseVersionID] reads.
func (v VersionID) String() string { return v.Namespace + "/" + v.Path + "@" + v.Version }

// ParseVersionID parses "@ns/<path>@<version>" (namespace, registry path
// and SemVer version as the registry package's grammar says; no
// language suffix, no upper case).
func ParseVersionID(s string) (VersionID, error) {
	slash := strings.IndexByte(s, '/')
	at := strings.LastIndexByte(s, '@')
	if slash <= 0 || at <= slash {
		return VersionID{}, fmt.Errorf("%q is not @ns/<path>@<version> (e.g. @acme/features/ui-kit@1.2.0): %w", s, ErrMalformed)
	}
	v := VersionID{Namespace: s[:slash], Path: s[slash+1 : at], Version: s[at+1:]}
	switch {
	case !registry.ValidNamespace(v.Namespace):
		return VersionID{}, fmt.Errorf("%q: invalid namespace %q: %w", s, v.Namespace, ErrMalformed)
	case !registry.ValidPath(v.Path):
		return VersionID{}, fmt.Errorf("%q: invalid registry path %q: %w", s, v.Path, ErrMalformed)
	case !registry.ValidVersion(v.Version):
		return VersionID{}, fmt.Errorf("%q: invalid version %q: %w", s, v.Version, ErrMalformed)
	}
	return v, nil
}

// BatchRequest is the body of POST /log/lookup: the versions to prove
// and, per namespace, the size of the largest tree head of its log the
// caller saw (a consistency proof from it is wanted).
type BatchRequest struct {
	Versions []string         `json:"versions"`
	Since    map[string]int64 `json:"since,omitempty"`
	// Witnesses is, per namespace, how many witnesses must have cosigned
	// the tree head its versions are proven against (as the single
	// lookup's ?witnesses=k): the largest tree head that many cosigned.
	Witnesses map[string]int `json:"witnesses,omitempty"`
}

// CheckWitnessMin checks how many witnesses a lookup requires: 1 to
// [MaxCosignatures].
func CheckWitnessMin(k int) error {
	if k < 1 || k > MaxCosignatures {
		return fmt.Errorf("%d witnesses required, want 1 to %d: %w", k, MaxCosignatures, ErrMalformed)
	}
	return nil
}

// ParseBatchRequest reads a batch lookup body of at most
// [MaxBatchBytes]: at most [MaxBatchVersions] distinct versions, each
// "@ns/<path>@<version>", and since sizes (whole numbers) only for
// namespaces some version names. It returns the versions in the order
// given.
func ParseBatchRequest(body []byte) (BatchRequest, []VersionID, error) {
	bad := func(what string) (BatchRequest, []VersionID, error) {
		return BatchRequest{}, nil, fmt.Errorf("batch lookup: %s: %w", what, ErrMalformed)
	}
	if len(body) > MaxBatchBytes {
		return bad(fmt.Sprintf("the body is larger than %d bytes", MaxBatchBytes))
	}
	var req BatchRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return bad("not a JSON object {\"versions\":[\"@ns/<path>@<version>\",…],\"since\":{\"@ns\":<tree size>}}")
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("data after the JSON object")
	}
	if len(req.Versions) == 0 {
		return bad("no versions")
	}
	if len(req.Versions) > MaxBatchVersions {
		return bad(fmt.Sprintf("%d versions, at most %d per request", len(req.Versions), MaxBatchVersions))
	}
	ids := make([]VersionID, 0, len(req.Versions))
	seen := map[string]bool{}
	nss := map[string]bool{}
	for _, s := range req.Versions {
		v, err := ParseVersionID(s)
		if err != nil {
			return BatchRequest{}, nil, fmt.Errorf("batch lookup: %w", err)
		}
		if seen[s] {
			return bad(strconv.Quote(s) + " is listed twice")
		}
		seen[s] = true
		nss[v.Namespace] = true
		ids = append(ids, v)
	}
	for ns, n := range req.Since {
		if !nss[ns] {
			return bad("since names " + strconv.Quote(ns) + ", which no version is of")
		}
		if n < 0 {
			return bad("since of " + ns + " is negative")
		}
	}
	for ns, k := range req.Witnesses {
		if !nss[ns] {
			return bad("witnesses names " + strconv.Quote(ns) + ", which no version is of")
		}
		if err := CheckWitnessMin(k); err != nil {
			return bad("witnesses of " + ns + ": " + strings.TrimSuffix(err.Error(), ": "+ErrMalformed.Error()))
		}
	}
	return req, ids, nil
}

// BatchLog is one namespace's part of a batch lookup's answer: its
// current signed checkpoint, which every version's proof of that
// namespace is against, and the consistency proof from the tree size the
// request named (Since) when it is smaller.
type BatchLog struct {
	Checkpoint  string   `json:"checkpoint"`
	Since       int64    `json:"since,omitempty"`
	Consistency []string `json:"consistency,omitempty"`
}

// BatchVersion is one version's part of a batch lookup's answer: its
// record, its index and its inclusion proof as [Proof.Marshal] writes it
// (against the namespace's checkpoint).
type BatchVersion struct {
	Record string `json:"record"`
	Index  int64  `json:"index"`
	Proof  string `json:"proof"`
}

// BatchResponse is the answer of POST /log/lookup. A version the log does
// not hold, or of a namespace the caller may not read (or that does not
// exist), is absent from Versions, and such a namespace from Logs: the
// two cases look the same.
type BatchResponse struct {
	Logs     map[string]BatchLog     `json:"logs"`
	Versions map[string]BatchVersion `json:"versions"`
}

// Lookup returns the answer for v in the shape of the single lookup
// route's, and whether the response holds it.
func (r BatchResponse) Lookup(v VersionID) (Lookup, bool) {
	bv, ok := r.Versions[v.String()]
	lg, lok := r.Logs[v.Namespace]
	if !ok || !lok {
		return Lookup{}, false
	}
	return Lookup{Record: bv.Record, Index: bv.Index, Proof: bv.Proof, Since: lg.Since, Consistency: slices.Clone(lg.Consistency)}, true
}
