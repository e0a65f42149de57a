// Package buildinfo tells which build of jig or jig-server is running.
//
// Release builds set the values with -ldflags:
//
//	go build -ldflags "-X github.com/jigkit/jig/internal/buildinfo.version=v1.2.3 \
//	  -X github.com/jigkit/jig/internal/buildinfo.commit=abc1234 \
//	  -X github.com/jigkit/jig/internal/buildinfo.date=2026-11-23T10:00:00Z" ./cmd/jig
//
// Without them the values come from the Go build info: "go install
// github.com/jigkit/jig/cmd/jig@v1.2.3" reports v1.2.3, and a build from a
// git checkout reports the commit and its time (with "-dirty" when the work
// tree had changes).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Set with -ldflags -X; empty means "take it from the Go build info".
var (
	version string
	commit  string
	date    string
)

// Info describes one build.
type Info struct {
	// Version is the module version (v1.2.3), or "dev" when unknown.
	Version string `json:"version"`
	// Commit is the VCS revision, or "" when unknown.
	Commit string `json:"commit,omitempty"`
	// Date is the commit or build time in RFC 3339, or "" when unknown.
	Date string `json:"date,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

var (
	once   sync.Once
	cached Info
)

// Get returns the build's information. It is computed once.
func Get() Info {
	once.Do(func() { cached = resolve(version, commit, date, readBuildInfo()) })
	return cached
}

func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// resolve combines the -ldflags values with the Go build info: an ldflags
// value always wins, then the module version and the vcs.* settings.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit == "" && info.Commit != "" {
			info.Commit += "-dirty"
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}

// String is the one-line form used by --version: "v1.2.3 (abc1234, 2026-11-23T10:00:00Z)".
func (i Info) String() string {
	s := i.Version
	short := i.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	switch {
	case short != "" && i.Date != "":
		s += " (" + short + ", " + i.Date + ")"
	case short != "":
		s += " (" + short + ")"
	}
	return s
}
