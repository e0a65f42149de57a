package regtest

import (
	"context"
	"fmt"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

// overlay serves the registry of the directory under test as the version
// it declares (and as the latest version), and everything else from base.
type overlay struct {
	base    *registryclient.Sources // nil: offline
	key     string
	version string
	m       *registry.Manifest
	files   map[string][]byte
}

// local reports whether id is the registry under test.
func (s *overlay) local(id registry.ID) bool {
	return id.Key() == s.key && (id.Version == "" || id.Version == s.version)
}

func (s *overlay) Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error) {
	if s.local(id) {
		c := *s.m
		return &c, nil
	}
	if s.base == nil {
		return nil, fmt.Errorf("offline: %s is not in the directory under test and there is no server to fetch it from", id)
	}
	return s.base.Manifest(ctx, id)
}

func (s *overlay) File(ctx context.Context, id registry.ID, path string) ([]byte, error) {
	if s.local(id) {
		b, ok := s.files[registry.NormalizeFilePath(path)]
		if !ok {
			return nil, fmt.Errorf("%s is not a file of the directory under test", path)
		}
		return b, nil
	}
	if s.base == nil {
		return nil, fmt.Errorf("offline: %s of %s is not in the directory under test", path, id)
	}
	return s.base.File(ctx, id, path)
}

func (s *overlay) Preset(ctx context.Context, name string) (*registry.Preset, error) {
	if s.base == nil {
		return nil, fmt.Errorf("offline: there is no server to fetch preset %s from", name)
	}
	return s.base.Preset(ctx, name)
}

// DefaultNamespace makes shorthand in the server's content mean what the
// server says it means.
func (s *overlay) DefaultNamespace(ctx context.Context, from string) (string, error) {
	if s.base == nil {
		return registry.DefaultNamespace, nil
	}
	return s.base.DefaultNamespace(ctx, from)
}

// Versions lists the registry under test with its published versions.
func (s *overlay) Versions(ctx context.Context, id registry.ID) ([]string, error) {
	var vs []string
	if s.base != nil {
		got, err := s.base.Versions(ctx, id)
		if err != nil && id.Key() != s.key {
			return nil, err
		}
		vs = got
	}
	if id.Key() == s.key {
		vs = append(vs, s.version)
		registry.SortVersions(vs)
		vs = compact(vs)
	}
	return vs, nil
}

func compact(vs []string) []string {
	var out []string
	for i, v := range vs {
		if i == 0 || v != vs[i-1] {
			out = append(out, v)
		}
	}
	return out
}
