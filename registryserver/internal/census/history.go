package census

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// history returns the history of the registry at ns/path over the last
// days days, oldest first: the days the state database recorded, then
// today with now, the registry's counts as they are now. A recorded day
// of today (the upkeep records yesterday) is replaced by now. Each day
// keeps at most [wire.MaxCensusHistoryVersions] versions. Its errors are
// [*core.APIError]s.
func (h *Server) history(ctx context.Context, ns, path string, days int, now []wire.CensusVersionRow) ([]wire.CensusDay, error) {
	t := h.Now().UTC()
	today := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	out := []wire.CensusDay{}
	if days > 1 {
		rows, err := h.State.History(ctx, ns, path, today.AddDate(0, 0, 1-days), today.AddDate(0, 0, -1))
		if err != nil {
			return nil, stateUnavailable(err)
		}
		for i := 0; i < len(rows); {
			day := rows[i].Day
			var versions []wire.CensusVersionRow
			for ; i < len(rows) && rows[i].Day.Equal(day); i++ {
				r := rows[i]
				versions = append(versions, wire.CensusVersionRow{Version: r.Version, Projects: r.Projects, Clean: r.Clean, Drifted: r.Drifted})
			}
			out = append(out, historyDay(day.Format(time.DateOnly), false, versions))
		}
	}
	return append(out, historyDay(today.Format(time.DateOnly), true, slices.Clone(now))), nil
}

// historyDay is one day of a history with its versions (newest first),
// at most [wire.MaxCensusHistoryVersions] of them: those with the most
// projects (the newer of two alike), the others summed in Other.
func historyDay(day string, live bool, versions []wire.CensusVersionRow) wire.CensusDay {
	d := wire.CensusDay{Day: day, Live: live, Versions: versions}
	if d.Versions == nil {
		d.Versions = []wire.CensusVersionRow{}
	}
	if len(versions) <= wire.MaxCensusHistoryVersions {
		return d
	}
	slices.SortStableFunc(versions, func(a, b wire.CensusVersionRow) int { return cmp.Compare(b.Projects, a.Projects) })
	other := &wire.CensusOther{}
	for _, v := range versions[wire.MaxCensusHistoryVersions:] {
		other.Versions++
		other.Projects += v.Projects
		other.Clean += v.Clean
		other.Drifted += v.Drifted
	}
	d.Versions = versions[:wire.MaxCensusHistoryVersions:wire.MaxCensusHistoryVersions]
	slices.SortFunc(d.Versions, func(a, b wire.CensusVersionRow) int { return registry.CompareVersions(b.Version, a.Version) })
	d.Other = other
	return d
}
