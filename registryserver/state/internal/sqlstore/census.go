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
	for range 3 {
		err := s.tx(ctx, func(tx *sql.Tx) error { return s.putReport(ctx, tx, r, lim) })
		if !errors.Is(err, errRetry) {
			return err
		}
	}
	return errors.New("the census report's project was removed and added again while it was stored; send it again")
}

// errRetry is what [Store.putReport] returns when another transaction
// removed the project between two of its statements.
var errRetry = errors.New("retry")

func (s *Store) putReport(ctx context.Context, tx *sql.Tx, r *state.Report, lim state.Limits) error {
	{
		ns, project := r.Namespace, r.Project
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO census_projects (ns, project, reporter, branch, commit_id, jig, reported_at, verified_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ns, project) DO NOTHING`),
			ns, project, r.Reporter, r.Branch, r.Commit, r.Jig, r.At.UnixMilli(), r.VerifiedBy)
		if err != nil {
			return err
		}
		added, err := res.RowsAffected()
		if err != nil {
			return err
		}
		var old []entry
		if added == 1 {
			if err := s.addProject(ctx, tx, ns, r.Reporter, lim); err != nil {
				return err
			}
		} else {
			var reporter, verifiedBy string
			err := tx.QueryRowContext(ctx, s.q(`SELECT reporter, verified_by FROM census_projects WHERE ns = ? AND project = ?`+s.d.ForUpdate),
				ns, project).Scan(&reporter, &verifiedBy)
			if errors.Is(err, sql.ErrNoRows) {
				return errRetry
			}
			if err != nil {
				return err
			}
			if verifiedBy != "" && r.VerifiedBy != verifiedBy {
				return state.ErrVerifiedEntry
			}
			if reporter != r.Reporter {
				if err := s.moveProject(ctx, tx, ns, reporter, r.Reporter, lim.Reporter); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE census_projects SET reporter = ?, branch = ?, commit_id = ?, jig = ?, reported_at = ?, verified_by = ?
				WHERE ns = ? AND project = ?`), r.Reporter, r.Branch, r.Commit, r.Jig, r.At.UnixMilli(), r.VerifiedBy, ns, project); err != nil {
				return err
			}
			if old, err = s.entries(ctx, tx, ns, project); err != nil {
				return err
			}
		}
		return s.replaceEntries(ctx, tx, ns, project, old, entriesOf(r))
	}
}

// addProject counts a new project of reporter in ns, within lim: the
// namespace's row is locked first, then the reporter's, in every
// transaction, so that two of them never wait on each other.
func (s *Store) addProject(ctx context.Context, tx *sql.Tx, ns, reporter string, lim state.Limits) error {
	if err := s.bump(ctx, tx, `census_namespaces`, `ns = ?`, []any{ns}, lim.Namespace, state.ScopeNamespace); err != nil {
		return err
	}
	return s.bump(ctx, tx, `census_reporters`, `ns = ? AND reporter = ?`, []any{ns, reporter}, lim.Reporter, state.ScopeReporter)
}

// moveProject moves a project of ns from one reporter's count to
// another's, within limit for the new one; the rows are locked in name
// order.
func (s *Store) moveProject(ctx context.Context, tx *sql.Tx, ns, from, to string, limit int) error {
	steps := []func() error{
		func() error { return s.drop(ctx, tx, `census_reporters`, `ns = ? AND reporter = ?`, ns, from) },
		func() error {
			return s.bump(ctx, tx, `census_reporters`, `ns = ? AND reporter = ?`, []any{ns, to}, limit, state.ScopeReporter)
		},
	}
	if to < from {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// bump adds one to the projects of the counter row of table that where
// selects, creating it, unless it is at limit (0: no limit).
func (s *Store) bump(ctx context.Context, tx *sql.Tx, table, where string, key []any, limit int, scope string) error {
	cols := "ns"
	if len(key) == 2 {
		cols = "ns, reporter"
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO `+table+` (`+cols+`, projects) VALUES `+rows(1, len(key)+1)+
		` ON CONFLICT (`+cols+`) DO NOTHING`), append(slices.Clone(key), 0)...); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, s.q(`UPDATE `+table+` SET projects = projects + 1 WHERE `+where+` AND (? = 0 OR projects < ?)`),
		append(slices.Clone(key), limit, limit)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	return &state.LimitError{Scope: scope, Limit: limit}
}

// drop takes one from the projects of the counter row of table that
// where selects.
func (s *Store) drop(ctx context.Context, tx *sql.Tx, table, where string, key ...any) error {
	_, err := tx.ExecContext(ctx, s.q(`UPDATE `+table+` SET projects = projects - 1 WHERE `+where+` AND projects > 0`), key...)
	return err
}

// entries reads the registries of project in ns, sorted by path. The
// sort is not the query's: ORDER BY path would lead a planner to the
// primary key (ns, path, project), a walk of the whole namespace.
func (s *Store) entries(ctx context.Context, tx *sql.Tx, ns, project string) ([]entry, error) {
	rs, err := tx.QueryContext(ctx, s.q(`SELECT path, version, state, drifted, not_taken FROM census_entries
		WHERE ns = ? AND project = ?`), ns, project)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []entry
	for rs.Next() {
		var e entry
		var drifted, notTaken string
		if err := rs.Scan(&e.path, &e.version, &e.state, &drifted, &notTaken); err != nil {
			return nil, err
		}
		if err := unmarshalEntry(&e, drifted, notTaken); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return out, rs.Err()
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

// replaceEntries replaces the registries old of project in ns with new
// and keeps the counters: nothing is written when they are the same.
func (s *Store) replaceEntries(ctx context.Context, tx *sql.Tx, ns, project string, old, new []entry) error {
	if sameEntries(old, new) {
		return nil
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
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM census_entries WHERE ns = ? AND project = ?`), ns, project); err != nil {
			return err
		}
	}
	for chunk := range slices.Chunk(new, chunkRows) {
		args := make([]any, 0, len(chunk)*8)
		for _, e := range chunk {
			drifted, _ := json.Marshal(nonNil(e.drifted))
			notTaken, _ := json.Marshal(nonNil(e.notTaken))
			args = append(args, ns, e.path, project, e.version, registry.VersionKey(e.version), e.state, string(drifted), string(notTaken))
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO census_entries (ns, path, project, version, version_key, state, drifted, not_taken)
			VALUES `+rows(len(chunk), 8)), args...); err != nil {
			return err
		}
	}
	if err := s.applyCounts(ctx, tx, ns, counts); err != nil {
		return err
	}
	return s.applyEdited(ctx, tx, ns, edited)
}

// applyCounts adds diff to census_counts, row keys in order (so that two
// transactions lock them in the same order), and drops the rows left at
// zero.
func (s *Store) applyCounts(ctx context.Context, tx *sql.Tx, ns string, diff map[countKey]countDiff) error {
	keys := slices.SortedFunc(maps.Keys(diff), func(a, b countKey) int {
		return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.version, b.version))
	})
	keys = slices.DeleteFunc(keys, func(k countKey) bool { return diff[k] == countDiff{} })
	for chunk := range slices.Chunk(keys, chunkRows) {
		args := make([]any, 0, len(chunk)*5)
		for _, k := range chunk {
			args = append(args, ns, k.path, k.version, diff[k].clean, diff[k].drifted)
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO census_counts (ns, path, version, clean, drifted) VALUES `+rows(len(chunk), 5)+`
			ON CONFLICT (ns, path, version) DO UPDATE SET clean = census_counts.clean + excluded.clean,
			drifted = census_counts.drifted + excluded.drifted`), args...); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if d := diff[k]; d.clean < 0 || d.drifted < 0 {
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM census_counts WHERE ns = ? AND path = ? AND version = ? AND clean <= 0 AND drifted <= 0`),
				ns, k.path, k.version); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyEdited adds diff to census_edited as [Store.applyCounts] does to
// census_counts.
func (s *Store) applyEdited(ctx context.Context, tx *sql.Tx, ns string, diff map[editedKey]int) error {
	keys := slices.SortedFunc(maps.Keys(diff), func(a, b editedKey) int {
		return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.target, b.target))
	})
	keys = slices.DeleteFunc(keys, func(k editedKey) bool { return diff[k] == 0 })
	for chunk := range slices.Chunk(keys, chunkRows) {
		args := make([]any, 0, len(chunk)*4)
		for _, k := range chunk {
			args = append(args, ns, k.path, k.target, diff[k])
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO census_edited (ns, path, target, projects) VALUES `+rows(len(chunk), 4)+`
			ON CONFLICT (ns, path, target) DO UPDATE SET projects = census_edited.projects + excluded.projects`), args...); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if diff[k] < 0 {
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM census_edited WHERE ns = ? AND path = ? AND target = ? AND projects <= 0`),
				ns, k.path, k.target); err != nil {
				return err
			}
		}
	}
	return nil
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
		err = s.tx(ctx, func(tx *sql.Tx) error {
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
	return removed, nil
}

// removeProject removes project from ns when its report is still older
// than before (a newer one may have come meanwhile) and reports whether
// it did.
func (s *Store) removeProject(ctx context.Context, tx *sql.Tx, ns, project string, before time.Time) (bool, error) {
	var reporter string
	var at int64
	err := tx.QueryRowContext(ctx, s.q(`SELECT reporter, reported_at FROM census_projects WHERE ns = ? AND project = ?`+s.d.ForUpdate),
		ns, project).Scan(&reporter, &at)
	if errors.Is(err, sql.ErrNoRows) || err == nil && at >= before.UnixMilli() {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	old, err := s.entries(ctx, tx, ns, project)
	if err != nil {
		return false, err
	}
	if err := s.replaceEntries(ctx, tx, ns, project, old, nil); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM census_projects WHERE ns = ? AND project = ?`), ns, project); err != nil {
		return false, err
	}
	if err := s.drop(ctx, tx, `census_namespaces`, `ns = ?`, ns); err != nil {
		return false, err
	}
	return true, s.drop(ctx, tx, `census_reporters`, `ns = ? AND reporter = ?`, ns, reporter)
}

// Counts implements [state.Store].
func (s *Store) Counts(ctx context.Context, ns, path string) ([]state.Count, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	query, args := `SELECT path, version, clean, drifted FROM census_counts WHERE ns = ?`, []any{ns}
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
	rs, err := s.r.QueryContext(ctx, s.q(`SELECT target, projects FROM census_edited WHERE ns = ? AND path = ?
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
			SELECT ns, path, ?, version, clean, drifted FROM census_counts`), d)
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
