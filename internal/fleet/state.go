package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/jigkit/jig/internal/safefile"
)

// StateFile is the name of the state file in the work directory.
const StateFile = "state.json"

// stateVersion is the version of the state file's format.
const stateVersion = 1

// state is the state file: the outcome of each repository (by its
// redacted address) for one registry version.
type state struct {
	mu   sync.Mutex
	path string
	doc  stateDoc
}

type stateDoc struct {
	Version  int               `json:"version"`
	Registry string            `json:"registry"`
	To       string            `json:"to"`
	Repos    map[string]Result `json:"repos"`
}

// loadState reads the state file in dir; a missing file is an empty state.
func loadState(dir, registryKey, version string) (*state, error) {
	st := &state{path: filepath.Join(dir, StateFile), doc: stateDoc{Version: stateVersion, Registry: registryKey, To: version, Repos: map[string]Result{}}}
	data, err := os.ReadFile(st.path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	var doc stateDoc
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != stateVersion {
		return nil, fmt.Errorf("the state file %s is not one jig wrote (%v); delete it to start the rollout afresh", st.path, err)
	}
	if doc.Repos == nil {
		doc.Repos = map[string]Result{}
	}
	st.doc.Repos = doc.Repos
	return st, nil
}

// done returns the recorded result of repo when it needs no more work.
func (s *state) done(repo string) (Result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.doc.Repos[repo]
	return r, ok && r.Status.final()
}

// previous returns the recorded result of repo, if any.
func (s *state) previous(repo string) (Result, bool) {
	if s == nil {
		return Result{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.doc.Repos[repo]
	return r, ok
}

// record stores r and writes the file atomically and durably (a synced
// temporary file in the same directory, a rename, a sync of the
// directory): a record is whole and on disk before the step it announces.
func (s *state) record(r Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc.Repos[r.Repo] = r
	data, err := json.MarshalIndent(s.doc, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFileAtomic(s.path, append(data, '\n'), 0o644)
}
