package cli

import (
	"runtime"
)

// VersionCmd is "jig version".
type VersionCmd struct{}

// Run prints the CLI version, the Go runtime version, the platform and the
// absolute rc-file path, one per line.
func (c *VersionCmd) Run(app *App) error {
	path, err := app.ConfigPath()
	if err != nil {
		return err
	}
	app.Out.Printf("Version: %s\n", Version)
	app.Out.Printf("Go: %s\n", runtime.Version())
	app.Out.Printf("Platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	app.Out.Printf("Config: %s\n", path)
	return nil
}
