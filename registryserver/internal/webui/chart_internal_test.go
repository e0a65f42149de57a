package webui

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/wire"
)

var updateCharts = flag.Bool("update", false, "rewrite testdata/chart/*.html")

// historyOf builds a history of days days ending 2026-04-04 (live),
// leaving out the days skip reports, with per day the versions versions
// returns for that day's index.
func historyOf(days int, skip func(i int) bool, versions func(i int) []wire.CensusVersionRow) []wire.CensusDay {
	last := time.Date(2026, 4, 4, 0, 0, 0, 0, time.UTC)
	var h []wire.CensusDay
	for i := range days {
		if skip != nil && skip(i) && i != days-1 {
			continue
		}
		h = append(h, wire.CensusDay{Day: last.AddDate(0, 0, i-days+1).Format(time.DateOnly), Live: i == days-1, Versions: versions(i)})
	}
	return h
}

// chartCases are the adoption charts of the golden files.
var chartCases = []struct {
	name, id, latest string
	history          []wire.CensusDay
}{
	// Today alone: a bar at the right end.
	{"today", "@main/x", "1.0.0", historyOf(1, nil, func(int) []wire.CensusVersionRow {
		return []wire.CensusVersionRow{{Version: "1.0.0", Projects: 3, Clean: 2, Drifted: 1}}
	})},
	// One version spreading over a month, two days not recorded.
	{"one-version", "@main/x", "1.0.0", historyOf(30, func(i int) bool { return i == 10 || i == 11 }, func(i int) []wire.CensusVersionRow {
		return []wire.CensusVersionRow{{Version: "1.0.0", Projects: 1 + i, Clean: 1 + i}}
	})},
	// Twelve versions over 90 days, each published a week after the
	// last and taking over from it, the server down one week, a day with
	// versions the server summed, and versions whose names a hostile
	// catalog could send (escaped).
	{"many", "@acme/runtimes/<node>", "12.0.0", historyOf(ChartDays, func(i int) bool { return i >= 40 && i < 47 }, func(i int) []wire.CensusVersionRow {
		var vs []wire.CensusVersionRow
		for v := 12; v >= 1; v-- {
			published := (v - 1) * 7
			if i < published {
				continue
			}
			n := min(i-published+1, 30) * 2
			if v < 12 && i >= published+14 {
				n = max(n-(i-published-14)*3, 1)
			}
			vs = append(vs, wire.CensusVersionRow{Version: fmt.Sprintf("%d.0.0", v), Projects: n, Clean: n})
		}
		if i == 60 {
			vs = append(vs, wire.CensusVersionRow{Version: `0.0.1-"><script>alert(1)</script>`, Projects: 40, Clean: 40})
		}
		return vs
	})},
}

// TestAdoptionChartGolden renders the adoption chart of a registry with
// one day of history, one version, and many versions (eight drawn apart,
// the others together, a week not recorded, names to escape), and
// compares it with testdata/chart/<name>.html (go test -run
// TestAdoptionChartGolden -update rewrites them). Each is well-formed
// XML, holds no script and no style attribute, and bounds what it draws.
func TestAdoptionChartGolden(t *testing.T) {
	t.Parallel()
	u, err := New(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ch := adoptionChart(c.id, c.latest, c.history)
			if ch == nil {
				t.Fatal("no chart")
			}
			var buf bytes.Buffer
			if err := u.pages["registry"].ExecuteTemplate(&buf, "chart", ch); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			golden := filepath.Join("testdata", "chart", c.name+".html")
			if *updateCharts {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the chart differs from %s (rewrite with -update if meant):\n%s", golden, got)
			}
			svg := got[bytes.Index(got, []byte("<svg")) : bytes.Index(got, []byte("</svg>"))+len("</svg>")]
			if err := wellFormed(svg); err != nil {
				t.Errorf("the SVG is not well-formed: %v", err)
			}
			for _, bad := range []string{"<script", "style=", "javascript:", "onload"} {
				if bytes.Contains(got, []byte(bad)) {
					t.Errorf("the chart holds %q", bad)
				}
			}
			if n := len(ch.Series); n > maxChartSeries+1 {
				t.Errorf("%d series, want at most %d", n, maxChartSeries+1)
			}
			if len(ch.Rows) > maxChartRows {
				t.Errorf("%d table rows, want at most %d", len(ch.Rows), maxChartRows)
			}
		})
	}
}

// wellFormed checks that b parses as XML.
func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestAdoptionChart checks what the chart says and when there is none.
func TestAdoptionChart(t *testing.T) {
	t.Parallel()
	v := func(pairs ...any) []wire.CensusVersionRow {
		var out []wire.CensusVersionRow
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, wire.CensusVersionRow{Version: pairs[i].(string), Projects: pairs[i+1].(int)})
		}
		return out
	}
	day := func(d string, live bool, vs []wire.CensusVersionRow) wire.CensusDay {
		return wire.CensusDay{Day: d, Live: live, Versions: vs}
	}
	tests := []struct {
		name    string
		latest  string
		history []wire.CensusDay
		// want is the summary, "" for no chart.
		want string
		// series are the versions drawn apart, bottom first.
		series []string
	}{
		{"no history", "1.0.0", nil, "", nil},
		{"no projects", "1.0.0", []wire.CensusDay{day("2026-04-04", true, nil)}, "", nil},
		{"bad day", "1.0.0", []wire.CensusDay{day("yesterday", true, v("1.0.0", 1))}, "", nil},
		{"all on latest", "1.0.0", []wire.CensusDay{day("2026-04-04", true, v("1.0.0", 3))},
			"All 3 projects are on the latest version, 1.0.0.", []string{"1.0.0"}},
		{"one behind", "2.0.0", []wire.CensusDay{day("2026-04-04", true, v("2.0.0", 3, "1.0.0", 1))},
			"1 project of 4 is behind the latest version, 2.0.0 (3 on it).", []string{"2.0.0", "1.0.0"}},
		{"none on latest", "3.0.0", []wire.CensusDay{day("2026-04-04", true, v("2.0.0", 2))},
			"2 projects of 2 are behind the latest version, 3.0.0 (0 on it).", []string{"3.0.0", "2.0.0"}},
		{"gone now", "1.0.0", []wire.CensusDay{day("2026-04-01", false, v("1.0.0", 2)), day("2026-04-04", true, nil)},
			"No project reports this registry now.", []string{"1.0.0"}},
		{"older than the window", "1.0.0", []wire.CensusDay{day("2025-01-01", false, v("1.0.0", 2)), day("2026-04-04", true, nil)}, "", nil},
		{"ten versions", "10.0.0", []wire.CensusDay{day("2026-04-04", true, v("10.0.0", 1, "9.0.0", 9, "8.0.0", 8, "7.0.0", 7, "6.0.0", 6, "5.0.0", 5, "4.0.0", 4, "3.0.0", 3, "2.0.0", 2, "1.0.0", 1))},
			"45 projects of 46 are behind the latest version, 10.0.0 (1 on it).", []string{"10.0.0", "9.0.0", "8.0.0", "7.0.0", "6.0.0", "5.0.0", "4.0.0", "3.0.0", chartOtherVersionsOf}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := adoptionChart("@main/x", tt.latest, tt.history)
			if tt.want == "" {
				if c != nil {
					t.Errorf("got a chart (%s), want none", c.Summary)
				}
				return
			}
			if c == nil {
				t.Fatalf("got no chart, want %q", tt.want)
			}
			var names []string
			for _, s := range c.Series {
				names = append(names, s.Name)
			}
			if c.Summary != tt.want || strings.Join(names, " ") != strings.Join(tt.series, " ") {
				t.Errorf("got %q with series %v, want %q with %v", c.Summary, names, tt.want, tt.series)
			}
			if !strings.Contains(c.Desc, c.Summary) {
				t.Errorf("the description %q does not hold the summary", c.Desc)
			}
		})
	}
}
