package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jigkit/jig/registry"
)

// resourceScheme prefixes every resource: jig://@ns/path@version is a
// registry's manifest (registry.json), jig://@ns/path@version/<file> one of
// its files as published.
const resourceScheme = "jig://"

func (s *server) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "registry",
		Title:       "Registry manifest or file",
		Description: "jig://@ns/path@version is a registry's manifest (registry.json); jig://@ns/path@version/<file> is one of its files, e.g. jig://@main/quality/eslint@1.0.0/templates/eslint.config.js.",
		URITemplate: resourceScheme + "{+ref}",
	}, s.readResource)
}

// parseResource splits a jig:// URI into the registry and the file path
// ("" for the manifest).
func parseResource(uri string) (registry.ID, string, error) {
	rest, ok := strings.CutPrefix(uri, resourceScheme)
	if !ok || !strings.HasPrefix(rest, "@") {
		return registry.ID{}, "", fmt.Errorf("resource %q: want jig://@ns/path@version[/file]", uri)
	}
	at := strings.Index(rest[1:], "@")
	if at < 0 {
		return registry.ID{}, "", fmt.Errorf("resource %q has no version: want jig://@ns/path@version[/file]", uri)
	}
	at++
	ref, file := rest, ""
	if slash := strings.Index(rest[at:], "/"); slash >= 0 {
		ref, file = rest[:at+slash], rest[at+slash+1:]
		if file == "" {
			return registry.ID{}, "", fmt.Errorf("resource %q: the file path after the version is empty", uri)
		}
	}
	id, err := registry.ParseID(ref)
	if err != nil {
		return registry.ID{}, "", fmt.Errorf("resource %q: %w", uri, err)
	}
	if id.IsPreset() || id.Version == "" {
		return registry.ID{}, "", fmt.Errorf("resource %q: want jig://@ns/path@version[/file] of a registry", uri)
	}
	return id, file, nil
}

func (s *server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	uri := req.Params.URI
	id, file, err := parseResource(uri)
	if err != nil {
		return nil, err
	}
	src, err := s.sources()
	if err != nil {
		return nil, shownError(s.errorText(ctx, err))
	}
	if file == "" {
		m, err := src.Manifest(ctx, id)
		if err != nil {
			return nil, shownError(s.errorText(ctx, err))
		}
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}}, nil
	}
	data, err := src.File(ctx, id, file)
	if err != nil {
		return nil, shownError(s.errorText(ctx, err))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: string(data)}}}, nil
}
