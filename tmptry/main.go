package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

type dirSource string

func (d dirSource) Manifest(_ context.Context, id registry.ID) (*registry.Manifest, error) {
	v := id.Version
	if v == "" {
		b, err := os.ReadFile(filepath.Join(string(d), id.Key(), "versions.json"))
		if err != nil {
			return nil, err
		}
		vl, _ := registry.ParseVersionList(b)
		v = vl.Latest()
	}
	b, err := os.ReadFile(filepath.Join(string(d), id.Key(), v, "registry.json"))
	if err != nil {
		return nil, err
	}
	return registry.ParseManifest(b)
}
func (d dirSource) File(_ context.Context, id registry.ID, p string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), id.Key(), id.Version, p))
}
func (d dirSource) Preset(_ context.Context, name string) (*registry.Preset, error) {
	b, err := os.ReadFile(filepath.Join(string(d), "presets", name, "preset.json"))
	if err != nil {
		return nil, err
	}
	return registry.ParsePreset(b)
}

func main() {
	e, _ := apply.New(dirSource(os.Args[1]))
	p, err := e.Run(context.Background(), apply.Request{Dir: os.Args[2], Template: os.Args[3], Mode: apply.ModeInit}, false)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	fmt.Println(string(b))
}
