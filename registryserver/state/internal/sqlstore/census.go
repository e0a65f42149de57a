package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
)

// entry is one registry of a project as census_entries holds it.
type entry struct {
	path, version, state string
	drifted              []string
	notTaken             []wire.CensusNotTaken
}

func (e entry) clean() bool { return e.state == wire.CensusClean }

func sameEntries(a, b []entry) bool {
	return slices.EqualFunc(a, b, func(x, y entry) bool {
		return x.path == y.path && x.version == y.version && x.state == y.state &&
			slices.Equal(x.drifted, y.drifted) && slices.Equal(x.notTaken, y.notTaken)
	})
}

func entriesOf(r *state.Report) []entry {
	out := make([]entry, 0, len(r.Registries))
	for _, e := range r.Registries {
		out = append(out, entry{path: e.Path, version: e.Version, state: e.State, drifted: e.Drifted, notTaken: e.NotTaken})
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return out
}

// PutReport implements [state.Store].
func (s *Store) PutReport(ctx context.Context, r *state.Report, lim state.Limits) error {
	if r.Project == "" || r.Namespace == "" {
		return errors.New("a census report needs a namespace and a project")
	}
	if s.d.GroupCommit {
		ctx, cancel := context.WithTimeout(ctx, OpTimeout)
		defer cancel()
		return s.putGrouped(ctx, r, lim)
	}
	return s.putAlone(ctx, r, lim)
}

// putAlone stores r in a transaction of its own, tried again while the
// engine ends it to break a deadlock (up to maxRetries times).
func (s *Store) putAlone(ctx context.Context, r *state.Report, lim state.Limits) error {
	removed := 0
	for range maxRetries {
		err := s.wtx(ctx, func(tx Tx) error {
			s.lockNamespaces(tx, r.Namespace)
			return s.putReport(ctx, tx, r, lim)
		})
		switch {
		case errors.Is(err, errRetry):
			if removed++; removed == 3 {
				return errors.New("the census report's project was removed and added again while it was stored; send it again")
			}
		case err != nil && s.d.Retry != nil && s.d.Retry(err) && ctx.Err() == nil:
		default:
			return err
		}
	}
	return errors.New("the census report met other servers' reports for the same projects too often; send it again")
}

// maxRetries bounds the tries of one report's transaction.
const maxRetries = 10

// lockNamespaces locks the census rows of namespaces, in order, first in
// every transaction that changes a census on an engine with row locks:
// two transactions of one namespace then never hold rows the other
// waits for (a group of reports locks its projects' rows in their
// order, which is not another group's).
func (s *Store) lockNamespaces(tx Tx, namespaces ...string) {
	if s.d.ForUpdate == "" {
		return
	}
	slices.Sort(namespaces)
	for _, ns := range slices.Compact(namespaces) {
		tx.Exec(s.q(`INSERT INTO census_namespaces (ns, projects) VALUES (?, 0)
			ON CONFLICT (ns) DO UPDATE SET projects = census_namespaces.projects`), ns)
	}
}

// errRetry is what [Store.putReport] returns when another transaction
// removed the project between two of its statements.
var errRetry = errors.New("retry")

func (s *Store) putReport(ctx context.Context, tx Tx, r *state.Report, lim state.Limits) error {
	ns, project := r.Namespace, r.Project
	// The steady state, a project its reporter reports again, is what
	// the update finds; a new project is what the insert adds; the
	// project's registries are read with them (in one round trip where
	// the engine pipelines). No other transaction changes ns meanwhile
	// ([Store.lockNamespaces]).
	updated := tx.Exec(s.q(`UPDATE census_projects SET branch = ?, commit_id = ?, jig = ?, reported_at = ?
		WHERE ns = ? AND project = ? AND reporter = ? AND verified_by = ?`),
		r.Branch, r.Commit, r.Jig, r.At.UnixMilli(), ns, project, r.Reporter, r.VerifiedBy)
	added := tx.Exec(s.q(`INSERT INTO census_projects (ns, project, reporter, branch, commit_id, jig, reported_at, verified_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ns, project) DO NOTHING`),
		ns, project, r.Reporter, r.Branch, r.Commit, r.Jig, r.At.UnixMilli(), r.VerifiedBy)
	old, err := s.entries(ctx, tx, ns, project)
	if err != nil {
		return err
	}
	switch {
	case updated.Rows == 1:
		s.replaceEntries(tx, ns, project, old, entriesOf(r))
		return tx.Flush(ctx)
	case added.Rows == 1:
		// The limits are checked once the statements that count on them
		// ran: a report refused is rolled back whole.
		inNS, ofReporter := s.addProject(tx, ns, r.Reporter, lim)
		s.replaceEntries(tx, ns, project, nil, entriesOf(r))
		if err := tx.Flush(ctx); err != nil {
			return err
		}
		return cmp.Or(inNS(), ofReporter())
	}
	// Another reporter's project, or one verified otherwise: only the
	// identity that verified an entry replaces it.
	var reporter, verifiedBy string
	found := false
	err = tx.Query(ctx, s.q(`SELECT reporter, verified_by FROM census_projects WHERE ns = ? AND project = ?`+s.d.ForUpdate),
		[]any{ns, project}, func(scan func(...any) error) error { found = true; return scan(&reporter, &verifiedBy) })
	if err != nil {
		return err
	}
	if !found {
		return errRetry
	}
	if verifiedBy != "" && r.VerifiedBy != verifiedBy {
		return state.ErrVerifiedEntry
	}
	moved := func() error { return nil }
	if reporter != r.Reporter {
		moved = s.moveProject(tx, ns, reporter, r.Reporter, lim.Reporter)
	}
	tx.Exec(s.q(`UPDATE census_projects SET reporter = ?, branch = ?, commit_id = ?, jig = ?, reported_at = ?, verified_by = ?
		WHERE ns = ? AND project = ?`), r.Reporter, r.Branch, r.Commit, r.Jig, r.At.UnixMilli(), r.VerifiedBy, ns, project)
	s.replaceEntries(tx, ns, project, old, entriesOf(r))
	if err := tx.Flush(ctx); err != nil {
		return err
	}
	return moved()
}

// addProject counts a new project of reporter in ns, within lim: the
// namespace's row is locked first, then the reporter's, in every
// transaction, so that two of them never wait on each other. The
// functions it returns say, once the statements ran, whether each limit
// held.
func (s *Store) addProject(tx Tx, ns, reporter string, lim state.Limits) (inNS, ofReporter func() error) {
	return s.bump(tx, `census_namespaces`, []any{ns}, lim.Namespace, state.ScopeNamespace),
		s.bump(tx, `census_reporters`, []any{ns, reporter}, lim.Reporter, state.ScopeReporter)
}

// moveProject moves a project of ns from one reporter's count to
// another's, within limit for the new one; the rows are locked in name
// order. The function it returns says, once the statements ran,
// whether the limit held.
func (s *Store) moveProject(tx Tx, ns, from, to string, limit int) func() error {
	if from < to {
		s.drop(tx, `census_reporters`, `ns = ? AND reporter = ?`, ns, from)
	}
	held := s.bump(tx, `census_reporters`, []any{ns, to}, limit, state.ScopeReporter)
	if to < from {
		s.drop(tx, `census_reporters`, `ns = ? AND reporter = ?`, ns, from)
	}
	return held
}

// bump adds one to the projects of the counter row of table that key
// names, creating it, unless it is at limit (0: no limit): one upsert,
// which changes no row at the limit. The function it returns says,
// once the statement ran, whether the limit held.
func (s *Store) bump(tx Tx, table string, key []any, limit int, scope string) func() error {
	cols := "ns"
	if len(key) == 2 {
		cols = "ns, reporter"
	}
	res := tx.Exec(s.q(`INSERT INTO `+table+` (`+cols+`, projects) VALUES `+rows(1, len(key)+1)+
		` ON CONFLICT (`+cols+`) DO UPDATE SET projects = `+table+`.projects + 1
		WHERE ? = 0 OR `+table+`.projects < ?`), append(slices.Clone(key), 1, limit, limit)...)
	return func() error {
		if res.Err != nil || res.Rows == 1 {
			return res.Err
		}
		return &state.LimitError{Scope: scope, Limit: limit}
	}
}

// drop takes one from the projects of the counter row of table that
// where selects.
func (s *Store) drop(tx Tx, table, where string, key ...any) {
	tx.Exec(s.q(`UPDATE `+table+` SET projects = projects - 1 WHERE `+where+` AND projects > 0`), key...)
}

// entries reads the registries of project in ns, sorted by path. The
// sort is not the query's: ORDER BY path would lead a planner to the
// primary key (ns, path, project), a walk of the whole namespace.
func (s *Store) entries(ctx context.Context, tx Tx, ns, project string) ([]entry, error) {
	var out []entry
	err := tx.Query(ctx, s.q(`SELECT path, version, state, drifted, not_taken FROM census_entries
		WHERE ns = ? AND project = ?`), []any{ns, project}, func(scan func(...any) error) error {
		var e entry
		var drifted, notTaken string
		if err := scan(&e.path, &e.version, &e.state, &drifted, &notTaken); err != nil {
			return err
		}
		if err := unmarshalEntry(&e, drifted, notTaken); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return out, err
}

func unmarshalEntry(e *entry, drifted, notTaken string) error {
	if err := json.Unmarshal([]byte(drifted), &e.drifted); err != nil {
		return fmt.Errorf("census_entries.drifted: %w", err)
	}
	if err := json.Unmarshal([]byte(notTaken), &e.notTaken); err != nil {
		return fmt.Errorf("census_entries.not_taken: %w", err)
	}
	if len(e.drifted) == 0 {
		e.drifted = nil
	}
	if len(e.notTaken) == 0 {
		e.notTaken = nil
	}
	return nil
}

// nonNil returns s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// countKey and editedKey name a row of census_counts and census_edited.
type (
	countKey  struct{ path, version string }
	editedKey struct{ path, target string }
	countDiff struct{ clean, drifted int }
)

// replaceEntries queues the statements that replace the registries old
// of project in ns with new and keep the counters: none when they are
// the same.
func (s *Store) replaceEntries(tx Tx, ns, project string, old, new []entry) {
	if sameEntries(old, new) {
		return
	}
	counts := map[countKey]countDiff{}
	edited := map[editedKey]int{}
	tally := func(es []entry, sign int) {
		for _, e := range es {
			d := counts[countKey{e.path, e.version}]
			if e.clean() {
				d.clean += sign
			} else {
				d.drifted += sign
			}
			counts[countKey{e.path, e.version}] = d
			for _, t := range e.drifted {
				edited[editedKey{e.path, t}] += sign
			}
		}
	}
	tally(old, -1)
	tally(new, +1)
	if len(old) > 0 {
		tx.Exec(s.q(`DELETE FROM census_entries WHERE ns = ? AND project = ?`), ns, project)
	}
	for chunk := range slices.Chunk(new, chunkRows) {
		args := make([]any, 0, len(chunk)*8)
		for _, e := range chunk {
			drifted, _ := json.Marshal(nonNil(e.drifted))
			notTaken, _ := json.Marshal(nonNil(e.notTaken))
			args = append(args, ns, e.path, project, e.version, registry.VersionKey(e.version), e.state, string(drifted), string(notTaken))
		}
		tx.Exec(s.q(`INSERT INTO census_entries (ns, path, project, version, version_key, state, drifted, not_taken)
			VALUES `+rows(len(chunk), 8)), args...)
	}
	s.applyCounts(tx, ns, counts)
	s.applyEdited(tx, ns, edited)
}

// applyCounts adds diff to census_counts, row keys in order (so that two
// transactions lock them in the same order). The rows left at zero stay
// until the next upkeep's [Store.sweep]: reads pass them over.
func (s *Store) applyCounts(tx Tx, ns string, diff map[countKey]countDiff) {
	keys := slices.SortedFunc(maps.Keys(diff), func(a, b countKey) int {
		return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.version, b.version))
	})
	keys = slices.DeleteFunc(keys, func(k countKey) bool { return diff[k] == countDiff{} })
	for chunk := range slices.Chunk(keys, chunkRows) {
		args := make([]any, 0, len(chunk)*5)
		for _, k := range chunk {
			args = append(args, ns, k.path, k.version, diff[k].clean, diff[k].drifted)
		}
		tx.Exec(s.q(`INSERT INTO census_counts (ns, path, version, clean, drifted) VALUES `+rows(len(chunk), 5)+`
			ON CONFLICT (ns, path, version) DO UPDATE SET clean = census_counts.clean + excluded.clean,
			drifted = census_counts.drifted + excluded.drifted`), args...)
	}
}

// applyEdited adds diff to census_edited as [Store.applyCounts] does to
// census_counts.
func (s *Store) applyEdited(tx Tx, ns string, diff map[editedKey]int) {
	keys := slices.SortedFunc(maps.Keys(diff), func(a, b editedKey) int {
		return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.target, b.target))
	})
	keys = slices.DeleteFunc(keys, func(k editedKey) bool { return diff[k] == 0 })
	for chunk := range slices.Chunk(keys, chunkRows) {
		args := make([]any, 0, len(chunk)*4)
		for _, k := range chunk {
			args = append(args, ns, k.path, k.target, diff[k])
		}
		tx.Exec(s.q(`INSERT INTO census_edited (ns, path, target, projects) VALUES `+rows(len(chunk), 4)+`
			ON CONFLICT (ns, path, target) DO UPDATE SET projects = census_edited.projects + excluded.projects`), args...)
	}
}

// Expire implements [state.Store].
func (s *Store) Expire(ctx context.Context, ns string, before time.Time, max int) (int, error) {
	const batch = 200
	removed := 0
	for max <= 0 || removed < max {
		n := batch
		if max > 0 {
			n = min(n, max-removed)
		}
		type key struct{ ns, project string }
		var keys []key
		err := func() error {
			qctx, cancel := context.WithTimeout(ctx, OpTimeout)
			defer cancel()
			query, args := `SELECT ns, project FROM census_projects WHERE reported_at < ?`, []any{before.UnixMilli()}
			if ns != "" {
				query, args = query+` AND ns = ?`, append(args, ns)
			}
			rs, err := s.r.QueryContext(qctx, s.q(query+` ORDER BY reported_at LIMIT ?`), append(args, n)...)
			if err != nil {
				return err
			}
			defer rs.Close()
			for rs.Next() {
				var k key
				if err := rs.Scan(&k.ns, &k.project); err != nil {
					return err
				}
				keys = append(keys, k)
			}
			return rs.Err()
		}()
		if err != nil || len(keys) == 0 {
			return removed, err
		}
		err = s.wtx(ctx, func(tx Tx) error {
			var nss []string
			for _, k := range keys {
				nss = append(nss, k.ns)
			}
			s.lockNamespaces(tx, nss...)
			for _, k := range keys {
				ok, err := s.removeProject(ctx, tx, k.ns, k.project, before)
				if err != nil {
					return err
				}
				if ok {
					removed++
				}
			}
			return nil
		})
		if err != nil {
			return removed, err
		}
		if len(keys) < n {
			break
		}
	}
	if ns == "" {
		return removed, s.sweep(ctx)
	}
	return removed, nil
}

// sweep removes the counter rows left at zero, which the writes of
// reports leave to it (one statement fewer for each report that moves
// projects off a version or a target).
func (s *Store) sweep(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	for _, q := range []string{
		`DELETE FROM census_counts WHERE clean <= 0 AND drifted <= 0`,
		`DELETE FROM census_edited WHERE projects <= 0`,
	} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// removeProject removes project from ns when its report is still older
// than before (a newer one may have come meanwhile) and reports whether
// it did.
func (s *Store) removeProject(ctx context.Context, tx Tx, ns, project string, before time.Time) (bool, error) {
	var reporter string
	var at int64
	found := false
	err := tx.Query(ctx, s.q(`SELECT reporter, reported_at FROM census_projects WHERE ns = ? AND project = ?`+s.d.ForUpdate),
		[]any{ns, project}, func(scan func(...any) error) error { found = true; return scan(&reporter, &at) })
	if err != nil || !found || at >= before.UnixMilli() {
		return false, err
	}
	old, err := s.entries(ctx, tx, ns, project)
	if err != nil {
		return false, err
	}
	s.replaceEntries(tx, ns, project, old, nil)
	tx.Exec(s.q(`DELETE FROM census_projects WHERE ns = ? AND project = ?`), ns, project)
	s.drop(tx, `census_namespaces`, `ns = ?`, ns)
	s.drop(tx, `census_reporters`, `ns = ? AND reporter = ?`, ns, reporter)
	return true, tx.Flush(ctx)
}

// Counts implements [state.Store].
func (s *Store) Counts(ctx context.Context, ns, path string) ([]state.Count, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	query, args := `SELECT path, version, clean, drifted FROM census_counts WHERE ns = ? AND (clean > 0 OR drifted > 0)`, []any{ns}
	if path != "" {
		query, args = query+` AND path = ?`, append(args, path)
	}
	rs, err := s.r.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []state.Count
	for rs.Next() {
		var c state.Count
		if err := rs.Scan(&c.Path, &c.Version, &c.Clean, &c.Drifted); err != nil {
			return nil, err
		}
		c.Projects = c.Clean + c.Drifted
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b state.Count) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), registry.CompareVersions(b.Version, a.Version))
	})
	return out, rs.Err()
}

// A page cursor of [Store.Projects] is the version key and the project
// of the page's last row, each base64url, joined by ".".
func projectsCursor(versionKey, project string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(versionKey)) + "." + base64.RawURLEncoding.EncodeToString([]byte(project))
}

func parseProjectsCursor(c string) (versionKey, project string, err error) {
	a, b, ok := strings.Cut(c, ".")
	k, err1 := base64.RawURLEncoding.DecodeString(a)
	p, err2 := base64.RawURLEncoding.DecodeString(b)
	if !ok || err1 != nil || err2 != nil || len(k) == 0 || len(p) == 0 {
		return "", "", state.ErrInvalidCursor
	}
	return string(k), string(p), nil
}

// Projects implements [state.Store].
func (s *Store) Projects(ctx context.Context, ns, path, cursor string, limit int) ([]wire.CensusProjectRow, string, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	query := `SELECT e.version_key, e.project, e.version, e.state, e.drifted, e.not_taken, p.branch, p.commit_id, p.reported_at, p.verified_by
		FROM census_entries e JOIN census_projects p ON p.ns = e.ns AND p.project = e.project
		WHERE e.ns = ? AND e.path = ?`
	args := []any{ns, path}
	if cursor != "" {
		key, project, err := parseProjectsCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		query += ` AND (e.version_key < ? OR (e.version_key = ? AND e.project > ?))`
		args = append(args, key, key, project)
	}
	rs, err := s.r.QueryContext(ctx, s.q(query+` ORDER BY e.version_key DESC, e.project LIMIT ?`), append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rs.Close()
	out := []wire.CensusProjectRow{}
	var lastKey, next string
	for rs.Next() {
		if len(out) == limit {
			next = projectsCursor(lastKey, out[len(out)-1].Project)
			break
		}
		var row wire.CensusProjectRow
		var e entry
		var drifted, notTaken string
		var at int64
		var verifiedBy string
		if err := rs.Scan(&lastKey, &row.Project, &row.Version, &row.State, &drifted, &notTaken, &row.Branch, &row.Commit, &at, &verifiedBy); err != nil {
			return nil, "", err
		}
		row.Verified = verifiedBy != ""
		if err := unmarshalEntry(&e, drifted, notTaken); err != nil {
			return nil, "", err
		}
		row.Drifted, row.NotTaken = e.drifted, e.notTaken
		row.ReportedAt = time.UnixMilli(at).UTC().Format(time.RFC3339)
		out = append(out, row)
	}
	return out, next, rs.Err()
}

// Edited implements [state.Store].
func (s *Store) Edited(ctx context.Context, ns, path string, n int) ([]wire.CensusEdited, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	rs, err := s.r.QueryContext(ctx, s.q(`SELECT target, projects FROM census_edited WHERE ns = ? AND path = ? AND projects > 0
		ORDER BY projects DESC, target LIMIT ?`), ns, path, n)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := []wire.CensusEdited{}
	for rs.Next() {
		var e wire.CensusEdited
		if err := rs.Scan(&e.Target, &e.Projects); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rs.Err()
}

// dayFormat is how census_history holds a day.
const dayFormat = time.DateOnly

// Snapshot implements [state.Store].
func (s *Store) Snapshot(ctx context.Context, day time.Time) error {
	d := day.UTC().Format(dayFormat)
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM census_history WHERE day = ?`), d); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO census_history (ns, path, day, version, clean, drifted)
			SELECT ns, path, ?, version, clean, drifted FROM census_counts WHERE clean > 0 OR drifted > 0`), d)
		return err
	})
}

// History implements [state.Store].
func (s *Store) History(ctx context.Context, ns, path string, from, to time.Time) ([]state.Day, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	rs, err := s.r.QueryContext(ctx, s.q(`SELECT day, version, clean, drifted FROM census_history
		WHERE ns = ? AND path = ? AND day >= ? AND day <= ?`),
		ns, path, from.UTC().Format(dayFormat), to.UTC().Format(dayFormat))
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	// Sorted by day, then by version key (newest first), each key made
	// once: comparing versions parses them, and a window holds days x
	// versions rows.
	type keyed struct {
		d   state.Day
		key string
	}
	var rows []keyed
	for rs.Next() {
		var d state.Day
		var day string
		if err := rs.Scan(&day, &d.Version, &d.Clean, &d.Drifted); err != nil {
			return nil, err
		}
		if d.Day, err = time.Parse(dayFormat, day); err != nil {
			return nil, fmt.Errorf("census_history.day %q: %w", day, err)
		}
		d.Projects = d.Clean + d.Drifted
		rows = append(rows, keyed{d, registry.VersionKey(d.Version)})
	}
	slices.SortFunc(rows, func(a, b keyed) int {
		return cmp.Or(a.d.Day.Compare(b.d.Day), strings.Compare(b.key, a.key))
	})
	var out []state.Day
	for _, r := range rows {
		out = append(out, r.d)
	}
	return out, rs.Err()
}

// PruneHistory implements [state.Store].
func (s *Store) PruneHistory(ctx context.Context, before time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	_, err := s.w.ExecContext(ctx, s.q(`DELETE FROM census_history WHERE day < ?`), before.UTC().Format(dayFormat))
	return err
}
