package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jigkit/jig/internal/fleet/forge"
)

// RolloutRepo is a repository whose rollout request [Burndown] reads:
// its address (with the credentials git needs), and what an earlier run
// or plan knows of it (the default branch, the request's number).
type RolloutRepo struct {
	Repo   string
	Base   string
	Number int64
}

// The states of a [RolloutRow].
const (
	RolloutOpen   = "open"
	RolloutMerged = "merged"
	RolloutClosed = "closed"
	// RolloutNone: no request of jig's is open, and none is known.
	RolloutNone = "none"
	// RolloutUnknown: the forge could not be read (Error says why).
	RolloutUnknown = "unknown"
)

// RolloutRow is the request of one repository as the forge shows it.
type RolloutRow struct {
	// Repo is the address without credentials.
	Repo   string `json:"repo"`
	State  string `json:"state"`
	Number int64  `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
	Title  string `json:"title,omitempty"`
	// CI is the result of an open request's checks: "success",
	// "failure", "pending" or "" (none).
	CI string `json:"ci,omitempty"`
	// Conflicted is set when the forge finds the open request conflicts
	// with its base.
	Conflicted bool   `json:"conflicted,omitempty"`
	Error      string `json:"error,omitempty"`
}

// RolloutCounts is the burndown of a rollout: how many requests are in
// each state. Open counts every open request; Green, Red, Pending and
// Conflicted split them.
type RolloutCounts struct {
	Open       int `json:"open"`
	Green      int `json:"green"`
	Red        int `json:"red"`
	Pending    int `json:"pending"`
	Conflicted int `json:"conflicted"`
	Merged     int `json:"merged"`
	Closed     int `json:"closed"`
	None       int `json:"none"`
	Unknown    int `json:"unknown"`
}

// Count adds up rows.
func Count(rows []RolloutRow) RolloutCounts {
	var c RolloutCounts
	for _, r := range rows {
		switch r.State {
		case RolloutOpen:
			c.Open++
			switch {
			case r.Conflicted:
				c.Conflicted++
			case r.CI == string(forge.CISuccess):
				c.Green++
			case r.CI == string(forge.CIFailure):
				c.Red++
			default:
				c.Pending++
			}
		case RolloutMerged:
			c.Merged++
		case RolloutClosed:
			c.Closed++
		case RolloutNone:
			c.None++
		default:
			c.Unknown++
		}
	}
	return c
}

// Burndown reads from the forge the request jig opened for registry key
// in each repository (the branch [RegistryBranch]): a known number is
// read as it is (open, merged or closed), else the open request from the
// branch is looked for. An open request's checks are read too. It only
// reads; base, when set, is the forge's address for every repository
// ([API.Base]). At most four repositories are read at once.
func Burndown(ctx context.Context, client forge.Client, base, key string, repos []RolloutRepo) []RolloutRow {
	rows := make([]RolloutRow, len(repos))
	branch := RegistryBranch(key)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, rp := range repos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				rows[i] = RolloutRow{Repo: Redact(rp.Repo), State: RolloutUnknown, Error: ctx.Err().Error()}
				return
			}
			defer func() { <-sem }()
			rows[i] = burndownOne(ctx, client, base, branch, rp)
		}()
	}
	wg.Wait()
	return rows
}

func burndownOne(ctx context.Context, client forge.Client, base, branch string, rp RolloutRepo) RolloutRow {
	row := RolloutRow{Repo: Redact(rp.Repo), State: RolloutUnknown}
	fail := func(err error) RolloutRow {
		row.State, row.Error = RolloutUnknown, redactText(err.Error(), secrets(rp.Repo))
		return row
	}
	fr, err := forge.ParseRemote(rp.Repo)
	if err != nil {
		return fail(err)
	}
	if base != "" {
		fr.Base = strings.TrimRight(base, "/")
	}
	var pr *forge.PR
	if rp.Number > 0 {
		pr, err = client.Get(ctx, fr, rp.Number)
	} else {
		def := rp.Base
		if def == "" {
			if def, err = defaultBranch(ctx, rp.Repo); err != nil {
				return fail(err)
			}
		}
		pr, err = client.FindOpen(ctx, fr, def, branch)
	}
	if err != nil {
		return fail(err)
	}
	if pr == nil {
		row.State = RolloutNone
		return row
	}
	row.Number, row.URL, row.Title = pr.Number, pr.URL, pr.Title
	switch pr.State {
	case forge.StateMerged:
		row.State = RolloutMerged
		return row
	case forge.StateClosed:
		row.State = RolloutClosed
		return row
	}
	row.State = RolloutOpen
	row.Conflicted = !pr.Mergeable
	if pr.HeadSHA != "" {
		ci, err := client.CI(ctx, fr, pr.HeadSHA)
		if err != nil {
			return fail(err)
		}
		row.CI = string(ci)
		if ci == forge.CINone {
			row.CI = ""
		}
	}
	return row
}

// defaultBranch asks the remote for its default branch (git ls-remote
// --symref).
func defaultBranch(ctx context.Context, repo string) (string, error) {
	g := &gitRunner{dir: os.TempDir(), secret: secrets(repo)}
	out, err := g.run(ctx, "", "ls-remote", "--symref", "--", repo, "HEAD")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			b, _, _ := strings.Cut(ref, "\t")
			return b, nil
		}
	}
	return "", errors.New("the remote names no default branch")
}

// LastRun returns the results the state file of the newest run of
// registry key under workDir recorded (any version), and the file's
// path; none when there is no run.
func LastRun(workDir, key string) ([]Result, string, error) {
	prefix := strings.TrimPrefix(RegistryBranch(key), "jig/") + "-"
	entries, err := os.ReadDir(workDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var newest string
	var newestDoc stateDoc
	var when int64
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		path := filepath.Join(workDir, e.Name(), StateFile)
		info, err := os.Stat(path)
		if err != nil || info.ModTime().UnixNano() < when {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var doc stateDoc
		// Another registry's prefix may match ("@team/x" and
		// "@team/x-y"): the file names its registry.
		if json.Unmarshal(data, &doc) != nil || doc.Version != stateVersion || doc.Registry != key {
			continue
		}
		newest, newestDoc, when = path, doc, info.ModTime().UnixNano()
	}
	if newest == "" {
		return nil, "", nil
	}
	out := make([]Result, 0, len(newestDoc.Repos))
	for _, r := range newestDoc.Repos {
		out = append(out, r)
	}
	return out, newest, nil
}
