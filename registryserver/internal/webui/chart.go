package webui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// ChartDays is how many days of census history the registry page's
// adoption chart shows.
const ChartDays = wire.DefaultCensusHistoryDays

// The bounds and geometry of the adoption chart: an SVG of viewBox
// chartW x chartH, its plot area from plotLeft to plotRight and plotTop
// to plotBottom.
const (
	// maxChartSeries is how many versions the chart draws apart (the
	// latest among them); the others are drawn together as one.
	maxChartSeries = 8
	// minChartDays is the narrowest time axis: a short history (today
	// alone) is drawn at the right end of it rather than stretched.
	minChartDays = 14
	// maxChartRows bounds the rows of the chart's table.
	maxChartRows = 14

	chartW, chartH       = 640, 220
	plotLeft, plotRight  = 48, 630
	plotTop, plotBottom  = 10, 190
	chartLabelY          = 210
	chartOtherClass      = "so"
	chartOtherVersionsOf = "other versions"
)

// chart is the adoption chart of a registry page: stacked areas of the
// projects on each version per day, the latest version at the bottom,
// with a table of the same figures.
type chart struct {
	// Title and Desc are the SVG's accessible name and description.
	Title, Desc string
	// W and H are the SVG's size (its viewBox).
	W, H int
	// Series are the areas, the bottom of the stack first.
	Series []chartSeries
	// Grid are the horizontal lines with their projects.
	Grid []chartTick
	// Labels are the time axis's dates.
	Labels []chartLabel
	// PlotLeft and PlotRight bound the grid lines; LabelY is the time
	// axis's baseline.
	PlotLeft, PlotRight, LabelY int
	// Summary says, in words, how many projects are behind the latest
	// version today.
	Summary string
	// Rows are the table's days (at most [maxChartRows]), oldest first,
	// with a figure per series (in Series's order) and the total.
	Rows []chartRow
}

// chartSeries is one version (or the versions drawn together) of a chart.
type chartSeries struct {
	// Name is the version, or "other versions".
	Name string
	// Class colours the area: "s0" (the latest) to "s7", "so" for the
	// others together.
	Class  string
	Latest bool
	// Paths are the SVG path data of its areas, one per run of days
	// with a record.
	Paths []string
	// Now is its projects on the last day.
	Now int
}

type chartTick struct {
	Y     string
	Label string
}

type chartLabel struct {
	X, Anchor, Text string
}

type chartRow struct {
	Day    string
	Counts []int
	Total  int
}

// chartDay is one recorded day of the chart: its index on the time axis
// and its projects per series.
type chartDay struct {
	i      int
	day    string
	counts []int
}

// adoptionChart draws history (oldest first, as
// [wire.CensusRegistry.History]), the last [ChartDays] days of it, with
// latest (the registry's latest version) highlighted. It returns nil when
// no project reported the registry on any of those days.
func adoptionChart(id, latest string, history []wire.CensusDay) *chart {
	if len(history) == 0 {
		return nil
	}
	last, err := time.Parse(time.DateOnly, history[len(history)-1].Day)
	if err != nil {
		return nil
	}
	first := last.AddDate(0, 0, 1-ChartDays)
	var days []wire.CensusDay
	var at []int // the day index from first of each of days
	for _, d := range history {
		t, err := time.Parse(time.DateOnly, d.Day)
		if err != nil || t.Before(first) || t.After(last) || len(at) > 0 && int(t.Sub(first).Hours()/24) <= at[len(at)-1] {
			continue // not a day of the window, or out of order
		}
		days = append(days, d)
		at = append(at, int(t.Sub(first).Hours()/24))
	}
	most := 0
	for _, d := range days {
		most = max(most, d.Total())
	}
	if most == 0 {
		return nil
	}

	// The versions drawn apart: the latest, then those with the most
	// projects on a day (the newer of two alike); the rest together.
	peak := map[string]int{}
	other := false
	for _, d := range days {
		for _, v := range d.Versions {
			peak[v.Version] = max(peak[v.Version], v.Projects)
		}
		other = other || d.Other != nil && d.Other.Projects > 0
	}
	var ranked []string
	for v, n := range peak {
		if v != latest && n > 0 {
			ranked = append(ranked, v)
		}
	}
	slices.SortFunc(ranked, func(a, b string) int {
		return cmp.Or(cmp.Compare(peak[b], peak[a]), registry.CompareVersions(b, a), strings.Compare(a, b))
	})
	if len(ranked) > maxChartSeries-1 {
		other = true
		ranked = ranked[:maxChartSeries-1]
	}
	slices.SortFunc(ranked, func(a, b string) int { return cmp.Or(registry.CompareVersions(b, a), strings.Compare(a, b)) })
	c := &chart{W: chartW, H: chartH, PlotLeft: plotLeft, PlotRight: plotRight, LabelY: chartLabelY}
	if latest != "" {
		c.Series = append(c.Series, chartSeries{Name: latest, Class: "s0", Latest: true})
	}
	for i, v := range ranked {
		c.Series = append(c.Series, chartSeries{Name: v, Class: "s" + strconv.Itoa(i+1)})
	}
	if other {
		c.Series = append(c.Series, chartSeries{Name: chartOtherVersionsOf, Class: chartOtherClass})
	}
	// A version not drawn apart is in the last series, the others.
	index := map[string]int{}
	for i, s := range c.Series {
		if s.Class != chartOtherClass {
			index[s.Name] = i
		}
	}
	cds := make([]chartDay, len(days))
	for k, d := range days {
		cd := chartDay{i: at[k], day: d.Day, counts: make([]int, len(c.Series))}
		for _, v := range d.Versions {
			if i, ok := index[v.Version]; ok {
				cd.counts[i] += v.Projects
			} else if other {
				cd.counts[len(c.Series)-1] += v.Projects
			}
		}
		if d.Other != nil && other {
			cd.counts[len(c.Series)-1] += d.Other.Projects
		}
		cds[k] = cd
	}
	for i := range c.Series {
		c.Series[i].Now = cds[len(cds)-1].counts[i]
	}

	// The time axis: the window from the first recorded day to the last,
	// at least minChartDays wide, the last day at the right end.
	n := max(at[len(at)-1]-at[0]+1, minChartDays)
	start := at[len(at)-1] - n + 1
	top := niceCeil(most)
	dw := float64(plotRight-plotLeft) / float64(n)
	x := func(i int) float64 { return plotLeft + (float64(i-start)+0.5)*dw }
	y := func(v int) float64 { return plotBottom - float64(v)/float64(top)*(plotBottom-plotTop) }
	for run := 0; run < len(cds); {
		end := run + 1
		for end < len(cds) && cds[end].i == cds[end-1].i+1 {
			end++
		}
		c.areas(cds[run:end], x, y, dw)
		run = end
	}
	for _, v := range []int{0, top / 2, top} {
		if v == top/2 && top%2 != 0 {
			continue
		}
		c.Grid = append(c.Grid, chartTick{Y: num(y(v)), Label: shortCount(v)})
	}
	from := first.AddDate(0, 0, start).Format(time.DateOnly)
	to := days[len(days)-1].Day
	if days[len(days)-1].Live {
		to += " (today)"
	}
	c.Labels = []chartLabel{{X: strconv.Itoa(plotLeft), Anchor: "start", Text: from}, {X: strconv.Itoa(plotRight), Anchor: "end", Text: to}}

	total, onLatest := 0, 0
	for i, s := range c.Series {
		total += s.Now
		if s.Latest {
			onLatest = c.Series[i].Now
		}
	}
	switch {
	case total == 0:
		c.Summary = "No project reports this registry now."
	case latest == "":
		c.Summary = english.Count(total, "project reports", "projects report") + " this registry; no version of it is published."
	case total == onLatest:
		c.Summary = fmt.Sprintf("All %s on the latest version, %s.", english.Count(total, "project is", "projects are"), latest)
	default:
		behind := total - onLatest
		c.Summary = fmt.Sprintf("%s of %d %s behind the latest version, %s (%d on it).",
			english.Count(behind, "project", "projects"), total, english.Plural(behind, "is", "are"), latest, onLatest)
	}
	c.Title = "Projects per version of " + id
	c.Desc = fmt.Sprintf("Stacked areas: the projects on each version of %s per day, from %s to %s", id, from, to)
	if latest != "" {
		c.Desc += ", the latest version (" + latest + ") at the bottom"
	}
	c.Desc += ". Days without a record are blank. " + c.Summary

	step := 1
	if len(cds) > maxChartRows {
		step = (len(cds) - 1 + maxChartRows - 2) / (maxChartRows - 1)
	}
	for k := 0; k < len(cds); k++ {
		if k%step != 0 && k != len(cds)-1 {
			continue
		}
		r := chartRow{Day: cds[k].day, Counts: cds[k].counts}
		for _, v := range r.Counts {
			r.Total += v
		}
		c.Rows = append(c.Rows, r)
	}
	return c
}

// areas adds to each series the area over days, a run of consecutive
// days: each day is a point at its middle, the run's ends stretched half
// a day out, so a day alone is a bar one day wide.
func (c *chart) areas(days []chartDay, x func(int) float64, y func(int) float64, dw float64) {
	below := make([]int, len(days))
	for s := range c.Series {
		empty := true
		for _, d := range days {
			empty = empty && d.counts[s] == 0
		}
		if empty {
			for k, d := range days {
				below[k] += d.counts[s]
			}
			continue
		}
		var b strings.Builder
		point := func(cmd byte, px float64, v int) {
			b.WriteByte(cmd)
			b.WriteString(num(px))
			b.WriteByte(',')
			b.WriteString(num(y(v)))
		}
		point('M', x(days[0].i)-dw/2, below[0]+days[0].counts[s])
		for k, d := range days {
			point('L', x(d.i), below[k]+d.counts[s])
		}
		last := len(days) - 1
		point('L', x(days[last].i)+dw/2, below[last]+days[last].counts[s])
		point('L', x(days[last].i)+dw/2, below[last])
		for k := last; k >= 0; k-- {
			point('L', x(days[k].i), below[k])
		}
		point('L', x(days[0].i)-dw/2, below[0])
		b.WriteByte('Z')
		c.Series[s].Paths = append(c.Series[s].Paths, b.String())
		for k, d := range days {
			below[k] += d.counts[s]
		}
	}
}

// num writes a coordinate with one decimal at most.
func num(f float64) string {
	return strconv.FormatFloat(float64(int(f*10+0.5))/10, 'f', -1, 64)
}

// niceCeil returns the smallest of 1, 2, 5, 10, 20, 50, … at least n.
func niceCeil(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// shortCount writes a count of the axis: 20000 is "20k".
func shortCount(n int) string {
	if n >= 10000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
