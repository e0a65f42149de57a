package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/registryclient/apply"
)

// ProjectInput names the project a lifecycle tool works on.
type ProjectInput struct {
	Dir string `json:"dir,omitempty" jsonschema:"the project directory, relative to the directory jig mcp was started in (default: that directory); it must stay inside it"`
}

// projectDir resolves dir against the server's root and refuses anything
// outside it, symbolic links included.
func (s *server) projectDir(dir string) (string, error) {
	root := s.opts.Root
	if root == "" {
		return "", errors.New("jig mcp has no project directory; start it in the project")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("project directory %s: %w", root, err)
	}
	p := dir
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("dir %q is not a valid path", dir)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(realRoot, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("dir %q does not exist inside the project directory %s", dir, realRoot)
		}
		return "", fmt.Errorf("dir %q: %w", dir, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("dir %q is outside the project directory %s (symbolic links are followed); give a directory inside it", dir, realRoot)
	}
	return real, nil
}

// engine returns an apply engine over the configured sources that never
// runs a registry's custom merge scripts.
func (s *server) engine() (*apply.Engine, error) {
	src, err := s.sources()
	if err != nil {
		return nil, err
	}
	return apply.New(src, apply.WithAllowScripts(false))
}

// CheckOutput is the result of check.
type CheckOutput struct {
	Report *apply.CheckReport `json:"report" jsonschema:"drift of each installed registry's files and package.json entries against jig.json"`
}

func (s *server) check(ctx context.Context, in ProjectInput) (CheckOutput, error) {
	dir, err := s.projectDir(in.Dir)
	if err != nil {
		return CheckOutput{}, err
	}
	eng, err := s.engine()
	if err != nil {
		return CheckOutput{}, err
	}
	rep, err := eng.Check(ctx, dir)
	if err != nil {
		return CheckOutput{}, err
	}
	return CheckOutput{Report: rep}, nil
}

// OutdatedOutput is the result of outdated.
type OutdatedOutput struct {
	Dir        string                `json:"dir"`
	Outdated   bool                  `json:"outdated" jsonschema:"true when an installed registry has a newer version"`
	Registries []apply.OutdatedEntry `json:"registries"`
}

func (s *server) outdated(ctx context.Context, in ProjectInput) (OutdatedOutput, error) {
	dir, err := s.projectDir(in.Dir)
	if err != nil {
		return OutdatedOutput{}, err
	}
	eng, err := s.engine()
	if err != nil {
		return OutdatedOutput{}, err
	}
	entries, err := eng.Outdated(ctx, dir)
	if err != nil {
		return OutdatedOutput{}, err
	}
	out := OutdatedOutput{Dir: dir, Registries: entries}
	if out.Registries == nil {
		out.Registries = []apply.OutdatedEntry{}
	}
	for _, e := range entries {
		out.Outdated = out.Outdated || e.Outdated
	}
	return out, nil
}
