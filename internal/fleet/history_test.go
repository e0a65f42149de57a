package fleet

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/wire"
)

func TestAdoptionOf(t *testing.T) {
	t.Parallel()
	day := func(d string, live bool, on, off int) wire.CensusDay {
		vs := []wire.CensusVersionRow{}
		if on > 0 {
			vs = append(vs, wire.CensusVersionRow{Version: "2.0.0", Projects: on})
		}
		if off > 0 {
			vs = append(vs, wire.CensusVersionRow{Version: "1.0.0", Projects: off})
		}
		return wire.CensusDay{Day: d, Live: live, Versions: vs}
	}
	history := []wire.CensusDay{
		day("2026-02-20", false, 9, 9), // before the window
		day("2026-02-26", false, 0, 4),
		day("2026-02-27", false, 1, 3),
		day("2026-03-01", false, 2, 2), // 02-28 and 03-02 not recorded
		day("2026-03-03", false, 0, 0),
		day("2026-03-04", true, 3, 1),
	}
	a := func(d string, live bool, on, total int) *Adoption {
		return &Adoption{Day: d, Live: live, OnLatest: on, Total: total}
	}
	tests := []struct {
		name    string
		days, n int
		want    []*Adoption
		spark   string
	}{
		{"a mark a day", 7, 7, []*Adoption{a("2026-02-26", false, 0, 4), a("2026-02-27", false, 1, 4), nil, a("2026-03-01", false, 2, 4), nil, a("2026-03-03", false, 0, 0), a("2026-03-04", true, 3, 4)}, "▁▃ ▅ ·▆"},
		{"more marks than days", 3, 10, []*Adoption{nil, a("2026-03-03", false, 0, 0), a("2026-03-04", true, 3, 4)}, " ·▆"},
		{"periods", 8, 4, []*Adoption{a("2026-02-26", false, 0, 4), a("2026-02-27", false, 1, 4), a("2026-03-01", false, 2, 4), a("2026-03-04", true, 3, 4)}, "▁▃▅▆"},
		{"today", 1, 1, []*Adoption{a("2026-03-04", true, 3, 4)}, "▆"},
	}
	for _, tt := range tests {
		got := AdoptionOf(history, "2.0.0", tt.days, tt.n)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.name, diff)
		}
		if s := Sparkline(got); s != tt.spark {
			t.Errorf("%s: sparkline %q, want %q", tt.name, s, tt.spark)
		}
	}
	if AdoptionOf(nil, "2.0.0", 90, 30) != nil || AdoptionOf([]wire.CensusDay{{Day: "bad"}}, "2.0.0", 90, 30) != nil {
		t.Errorf("no history, or a bad day: want nil")
	}
	if s := Sparkline([]*Adoption{a("d", false, 0, 5), a("d", false, 5, 5)}); s != "▁█" {
		t.Errorf("none and all: got %q", s)
	}
}
