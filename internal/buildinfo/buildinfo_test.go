package buildinfo

import (
	"fmt"
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	vcs := func(rev, tm, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: tm}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  Info
	}{
		{name: "no build info", want: Info{Version: "dev"}},
		{name: "go install at a tag", bi: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}},
			want: Info{Version: "v1.2.3", GoVersion: "go1.26.0"}},
		{name: "checkout build", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef", "2026-11-23T10:00:00Z", "false")},
			want: Info{Version: "dev", Commit: "0123456789abcdef", Date: "2026-11-23T10:00:00Z"}},
		{name: "dirty checkout", bi: &debug.BuildInfo{Settings: vcs("abc", "2026-11-23T10:00:00Z", "true")},
			want: Info{Version: "dev", Commit: "abc-dirty", Date: "2026-11-23T10:00:00Z"}},
		{name: "ldflags win", version: "v2.0.0", commit: "fff", date: "2027-01-01T00:00:00Z",
			bi:   &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("abc", "2026-11-23T10:00:00Z", "true")},
			want: Info{Version: "v2.0.0", Commit: "fff", Date: "2027-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := resolve(tt.version, tt.commit, tt.date, tt.bi)
			if tt.want.GoVersion == "" {
				tt.want.GoVersion = got.GoVersion
			}
			tt.want.Platform = got.Platform
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func ExampleInfo_String() {
	i := Info{Version: "v1.2.3", Commit: "0123456789abcdef0123", Date: "2026-11-23T10:00:00Z"}
	fmt.Println(i.String())
	fmt.Println(Info{Version: "dev"}.String())
	// Output:
	// v1.2.3 (0123456789ab, 2026-11-23T10:00:00Z)
	// dev
}
