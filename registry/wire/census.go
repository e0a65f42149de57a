package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/redact"
)

// The states of a registry in a [CensusReport], as "jig check" sees it.
const (
	// CensusClean: every file and package.json entry is as jig wrote it.
	CensusClean = "clean"
	// CensusModified: a file or package.json entry was changed.
	CensusModified = "modified"
	// CensusMissing: a file was deleted (and none was changed).
	CensusMissing = "missing"
	// CensusConflicted: conflict markers an update wrote are still there.
	CensusConflicted = "conflicted"
)

// Limits of a [CensusReport] a server takes; a report beyond them is
// refused (413 PAYLOAD_TOO_LARGE, 400 INVALID_REPORT).
const (
	// MaxCensusReportBytes bounds the body of POST /census/@ns.
	MaxCensusReportBytes = 128 << 10
	// MaxCensusRegistries bounds the registries of one report.
	MaxCensusRegistries = 100
	// MaxCensusDrifted bounds the drifted targets of one registry.
	MaxCensusDrifted = 100
)

// CensusReport is the body of POST /census/@ns: what "jig check --report"
// found in one project for the registries of one namespace. It never
// carries file contents.
type CensusReport struct {
	// Project identifies the project: its origin remote URL without
	// credentials, or its directory name.
	Project string `json:"project"`
	// Branch and Commit are the project's checked-out branch and commit,
	// "" outside git.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Jig is the version of the jig that reported.
	Jig string `json:"jig,omitempty"`
	// Registries are the project's installed registries of the namespace.
	Registries []CensusEntry `json:"registries"`
	// ReportedAt is when the server stored the report (RFC 3339, UTC); the
	// server sets it, a client's value is ignored.
	ReportedAt string `json:"reportedAt,omitempty"`
}

// CensusEntry is one installed registry of a [CensusReport].
type CensusEntry struct {
	// Path is the registry's path in the namespace ("runtimes/node").
	Path    string `json:"path"`
	Version string `json:"version"`
	// State is [CensusClean], [CensusModified], [CensusMissing] or
	// [CensusConflicted].
	State string `json:"state"`
	// Drifted are the targets that are not clean, sorted.
	Drifted []string `json:"drifted,omitempty"`
	// NotTaken are the drifted targets a conflict resolution settled with
	// the project's side ("jig resolve --ours" or "--base"), leaving out
	// the installed version's changes to them, sorted by target.
	NotTaken []CensusNotTaken `json:"notTaken,omitempty"`
}

// CensusNotTaken is one target of a [CensusEntry] resolved without the
// installed version's changes.
type CensusNotTaken struct {
	Target string `json:"target"`
	// Side is the side written: "ours" or "base".
	Side string `json:"side"`
	// Changes counts the installed version's changes to the target that
	// were not taken (at least 1).
	Changes int `json:"changes"`
}

// Sides a [CensusNotTaken] may name.
const (
	CensusSideOurs = "ours"
	CensusSideBase = "base"
)

// MaxCensusChanges bounds [CensusNotTaken.Changes].
const MaxCensusChanges = 1 << 20

// String says what the resolution left out, as "jig check" and "jig
// fleet status" show it: "config.yaml: resolved with ours, 3 upstream
// changes not taken".
func (n CensusNotTaken) String() string {
	changes := "upstream changes"
	if n.Changes == 1 {
		changes = "upstream change"
	}
	return n.Target + ": resolved with " + n.Side + ", " + strconv.Itoa(n.Changes) + " " + changes + " not taken"
}

// CensusRegistries is the body of GET /census/@ns: one line per registry
// that current reports name, sorted by path.
type CensusRegistries struct {
	Namespace  string              `json:"namespace"`
	Registries []CensusRegistryRow `json:"registries"`
}

// CensusRegistryRow is one registry of [CensusRegistries].
type CensusRegistryRow struct {
	Path string `json:"path"`
	// Latest is the registry's latest published version, "" when the
	// namespace does not have it.
	Latest   string `json:"latest"`
	Projects int    `json:"projects"`
	Clean    int    `json:"clean"`
	Drifted  int    `json:"drifted"`
	// Behind counts the projects not on Latest.
	Behind int `json:"behind"`
}

// CensusRegistry is the body of GET /census/@ns/<path>: per version the
// number of projects, and one page of the projects, sorted by version
// (newest first) then project.
type CensusRegistry struct {
	Namespace string `json:"namespace"`
	Path      string `json:"path"`
	// Latest is as in [CensusRegistryRow].
	Latest   string             `json:"latest"`
	Versions []CensusVersionRow `json:"versions"`
	Projects []CensusProjectRow `json:"projects"`
	// Edited are the targets projects have drifted most, most first (at
	// most 20).
	Edited []CensusEdited `json:"edited"`
	// Next is the cursor of the following page of projects ("?cursor="),
	// "" on the last page.
	Next string `json:"next,omitempty"`
	// History is the registry's daily history, oldest day first, when
	// the request asked for it ("?history=90d"): the recorded days of
	// the window, then today, always last, with the counts as they are
	// now ([CensusDay.Live]). A day without a record is absent: the
	// server was not running at midnight (UTC), when it records the day,
	// or no project used the registry. Nil when not asked for.
	History []CensusDay `json:"history,omitempty"`
}

// The window of a census history (GET /census/@ns/<path>?history=90d).
const (
	// DefaultCensusHistoryDays is the window "jig fleet status --history"
	// and the web catalog's adoption chart show.
	DefaultCensusHistoryDays = 90
	// MaxCensusHistoryDays is the longest window: the history a server
	// keeps (two years).
	MaxCensusHistoryDays = 732
	// MaxCensusHistoryVersions bounds the versions of one day of a
	// history: those with the most projects; the rest are summed in
	// [CensusDay.Other].
	MaxCensusHistoryVersions = 100
)

// ErrInvalidHistory is what [ParseCensusHistory] returns (wrapped) for a
// window it does not take.
var ErrInvalidHistory = errors.New("invalid census history window")

// ParseCensusHistory reads a history window, the value of "?history=" and
// of "jig fleet status --history=": a number of days from 1 to
// [MaxCensusHistoryDays] followed by "d" ("90d"). It returns the days.
func ParseCensusHistory(s string) (int, error) {
	n, ok := strings.CutSuffix(s, "d")
	days, err := strconv.Atoi(n)
	if !ok || err != nil || n == "" || n[0] < '1' || n[0] > '9' || days > MaxCensusHistoryDays {
		if len(s) > 20 {
			s = s[:20] + "..."
		}
		return 0, fmt.Errorf("%w: %q: history must be a number of days such as 90d, from 1d to %dd", ErrInvalidHistory, s, MaxCensusHistoryDays)
	}
	return days, nil
}

// CensusHistoryWindow formats days as a history window ("90d"), the
// inverse of [ParseCensusHistory].
func CensusHistoryWindow(days int) string { return strconv.Itoa(days) + "d" }

// CensusDay is one day of a registry's census history
// ([CensusRegistry.History]).
type CensusDay struct {
	// Day is the UTC date, "2006-01-02".
	Day string `json:"day"`
	// Live marks today: the counts as they are now rather than as the
	// server recorded them at the end of a day.
	Live bool `json:"live,omitempty"`
	// Versions are the versions projects were on that day, newest first:
	// at most [MaxCensusHistoryVersions], those with the most projects.
	Versions []CensusVersionRow `json:"versions"`
	// Other sums the versions left out of Versions; nil when none was.
	Other *CensusOther `json:"other,omitempty"`
}

// CensusOther sums the versions a [CensusDay] leaves out.
type CensusOther struct {
	// Versions is how many versions it sums.
	Versions int `json:"versions"`
	Projects int `json:"projects"`
	Clean    int `json:"clean"`
	Drifted  int `json:"drifted"`
}

// Total returns the projects of the day, on any version (Other
// included).
func (d CensusDay) Total() int {
	n := 0
	for _, v := range d.Versions {
		n += v.Projects
	}
	if d.Other != nil {
		n += d.Other.Projects
	}
	return n
}

// On returns the projects on version that day (0 when version is not
// listed).
func (d CensusDay) On(version string) int {
	for _, v := range d.Versions {
		if v.Version == version {
			return v.Projects
		}
	}
	return 0
}

// CensusVersionRow is one version of [CensusRegistry].
type CensusVersionRow struct {
	Version  string `json:"version"`
	Projects int    `json:"projects"`
	Clean    int    `json:"clean"`
	Drifted  int    `json:"drifted"`
}

// CensusProjectRow is one project of [CensusRegistry].
type CensusProjectRow struct {
	Project string   `json:"project"`
	Version string   `json:"version"`
	State   string   `json:"state"`
	Drifted []string `json:"drifted,omitempty"`
	// NotTaken is as in [CensusEntry] (for the listed drifted targets).
	NotTaken   []CensusNotTaken `json:"notTaken,omitempty"`
	Branch     string           `json:"branch,omitempty"`
	Commit     string           `json:"commit,omitempty"`
	ReportedAt string           `json:"reportedAt"`
	// Verified is true when the report was sent with an OIDC identity
	// token that names the project as its repository; false for a report
	// sent with a static token, which anyone who may report could have
	// sent in the project's name.
	Verified bool `json:"verified,omitempty"`
}

// CensusEdited is one often-edited target of [CensusRegistry].
type CensusEdited struct {
	Target   string `json:"target"`
	Projects int    `json:"projects"`
}

// StripCredentials returns a git remote URL without what may be a secret:
// the user and password of an http(s) URL ("https://tok@host/x" is
// "https://host/x"), the password of any other URL (ssh://git:pw@host
// keeps "git"), and the query and fragment. A scp-like remote
// ("git@host:org/x.git") or a path is returned as it is, since it cannot
// carry a password. It is what a census report's project identity is.
func StripCredentials(remote string) string { return redact.Identity(remote) }

// CensusReceipt is the body of a successful POST /census/@ns.
type CensusReceipt struct {
	Project string `json:"project"`
	// Stored are the registry paths the report was kept for; Ignored
	// those the namespace does not have (a report naming none of its
	// registries is not kept).
	Stored  []string `json:"stored"`
	Ignored []string `json:"ignored"`
}
