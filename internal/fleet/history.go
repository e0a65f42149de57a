package fleet

import (
	"strings"
	"time"

	"github.com/jigkit/jig/registry/wire"
)

// Adoption is one day of a registry's history as "jig fleet status
// --history" shows it: how many projects were on the latest version.
type Adoption struct {
	// Day is the date ("2026-03-04"); Live marks today (counts as they
	// are now).
	Day  string
	Live bool
	// OnLatest are the projects on the latest version, Total all of
	// them.
	OnLatest, Total int
}

// Share is the part of the projects on the latest version, 0 to 1 (0
// for no projects).
func (a Adoption) Share() float64 {
	if a.Total == 0 {
		return 0
	}
	return float64(a.OnLatest) / float64(a.Total)
}

// AdoptionOf reads history (oldest first, today last, as
// [wire.CensusRegistry.History]) as the adoption of latest over a window
// of days days ending with its last day, cut into n periods of (about)
// equal length, oldest first: each holds the last recorded day of its
// period, or nil when the server recorded none in it. It returns nil for
// an empty history.
func AdoptionOf(history []wire.CensusDay, latest string, days, n int) []*Adoption {
	if len(history) == 0 || days < 1 || n < 1 {
		return nil
	}
	end, err := time.Parse(time.DateOnly, history[len(history)-1].Day)
	if err != nil {
		return nil
	}
	n = min(n, days)
	start := end.AddDate(0, 0, 1-days)
	out := make([]*Adoption, n)
	for _, d := range history {
		t, err := time.Parse(time.DateOnly, d.Day)
		if err != nil || t.Before(start) || t.After(end) {
			continue
		}
		i := int(t.Sub(start).Hours()/24) * n / days
		out[i] = &Adoption{Day: d.Day, Live: d.Live, OnLatest: d.On(latest), Total: d.Total()}
	}
	return out
}

// sparks are the marks of [Sparkline], from none to all.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the share on the latest version of each period of
// periods (see [AdoptionOf]) as one mark, "▁" for none to "█" for all
// of them; a period without a record is a space, one without projects
// "·".
func Sparkline(periods []*Adoption) string {
	var b strings.Builder
	for _, p := range periods {
		switch {
		case p == nil:
			b.WriteByte(' ')
		case p.Total == 0:
			b.WriteString("·")
		default:
			b.WriteRune(sparks[int(p.Share()*float64(len(sparks)-1)+0.5)])
		}
	}
	return b.String()
}
