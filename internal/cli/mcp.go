package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/internal/mcpserver"
	"github.com/jigkit/jig/registryclient"
)

// McpCmd is "jig mcp": a Model Context Protocol server on stdin/stdout for
// coding agents, using the rc file and credentials the other commands use.
type McpCmd struct {
	PlanTTL time.Duration `name:"plan-ttl" default:"15m" help:"How long a plan made with the plan tool can be applied."`
}

// Validate checks --plan-ttl.
func (c *McpCmd) Validate() error {
	if c.PlanTTL <= 0 {
		return fmt.Errorf("--plan-ttl %s must be positive, e.g. --plan-ttl 15m", c.PlanTTL)
	}
	return nil
}

// Run serves MCP until the client closes stdin. --timeout (or JIG_TIMEOUT)
// bounds each tool call instead of the whole run.
func (c *McpCmd) Run(ctx context.Context, app *App) error {
	perCall := app.timeout
	if perCall == 0 {
		perCall = 24 * time.Hour // "0 means no limit": effectively unbounded
	}
	app.deadline = time.Time{} // the server lives longer than one command
	root, err := projectDir("")
	if err != nil {
		return err
	}
	srv := mcpserver.New(mcpserver.Options{
		Config:        app.Config,
		ClientOptions: func() []registryclient.Option { return app.ClientOptions() },
		ErrorText:     ErrorText,
		Timeout:       perCall,
		Root:          root,
		PlanTTL:       c.PlanTTL,
		Version:       buildinfo.Get().Version,
	})
	return mcpserver.Run(ctx, srv)
}

// Help shows how an agent client starts the server.
func (c *McpCmd) Help() string {
	return `Speaks MCP on stdin/stdout; register it with an agent client as
{"mcpServers": {"jig": {"command": "jig", "args": ["mcp"]}}}.

Examples:
  jig mcp                       # serve the project in the current directory
  jig --timeout 5m mcp          # allow each tool call 5 minutes
  jig mcp --plan-ttl 5m         # plans can be applied for 5 minutes
  JIG_CONFIG=~/work/.jigrc jig mcp`
}
