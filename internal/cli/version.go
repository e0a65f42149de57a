package cli

import (
	"github.com/jigkit/jig/internal/buildinfo"
)

// VersionCmd is "jig version".
type VersionCmd struct {
	JSON bool `name:"json" help:"Print one JSON document: version, commit, date, go, platform and config."`
}

// versionReport is the --json document of "jig version".
type versionReport struct {
	buildinfo.Info
	Config string `json:"config"`
}

// Help is shown by "jig version --help".
func (c *VersionCmd) Help() string {
	return `Examples:
  jig version
  jig version --json
  jig --version`
}

// Run prints the CLI version (with the commit and build date when known),
// the Go runtime version, the platform and the absolute rc-file path, one
// per line, or one JSON document with --json.
func (c *VersionCmd) Run(app *App) error {
	path, err := app.ConfigPath()
	if err != nil {
		return err
	}
	info := buildinfo.Get()
	if c.JSON {
		return app.Out.JSON(versionReport{Info: info, Config: path})
	}
	app.Out.Printf("Version: %s\n", info.Version)
	if info.Commit != "" {
		app.Out.Printf("Commit: %s\n", info.Commit)
	}
	if info.Date != "" {
		app.Out.Printf("Built: %s\n", info.Date)
	}
	app.Out.Printf("Go: %s\n", info.GoVersion)
	app.Out.Printf("Platform: %s\n", info.Platform)
	app.Out.Printf("Config: %s\n", path)
	return nil
}
