package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// ProjectInput names the project a lifecycle tool works on.
type ProjectInput struct {
	Dir string `json:"dir,omitempty" jsonschema:"the project directory, relative to the directory jig mcp was started in (default: that directory); it must stay inside it"`
}

// projectDir resolves dir against the server's root and refuses anything
// outside it, symbolic links included. The directory must exist.
func (s *server) projectDir(dir string) (string, error) { return s.resolveDir(dir, false) }

// resolveDir is projectDir; with mayCreate the directory (a new project of
// init) may be missing, as long as its nearest existing parent, symbolic
// links resolved, is inside the root. A directory inside a .git directory
// is refused: writing there would give registries a way to git's hooks.
func (s *server) resolveDir(dir string, mayCreate bool) (string, error) {
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
	if errors.Is(err, os.ErrNotExist) && mayCreate {
		real, err = resolveMissing(p)
	}
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
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if registry.IsDotGit(seg) {
			return "", fmt.Errorf("dir %q is inside git's metadata directory (%s); give a project directory outside .git", dir, filepath.ToSlash(rel))
		}
	}
	return real, nil
}

// resolveMissing resolves the symbolic links of the nearest existing parent
// of the absolute, clean path p and appends the missing rest. A parent
// that exists but is no directory is an error.
func resolveMissing(p string) (string, error) {
	var rest []string
	for cur := p; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			fi, err := os.Stat(real)
			if err != nil {
				return "", err
			}
			if !fi.IsDir() {
				return "", fmt.Errorf("%s is not a directory", cur)
			}
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
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
