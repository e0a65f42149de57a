package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *server) addPrompts(srv *mcp.Server) {
	srv.AddPrompt(&mcp.Prompt{
		Name:        "setup_from_preset",
		Title:       "Set up a project from a preset",
		Description: "Pick a preset with the user and start a project from it.",
		Arguments: []*mcp.PromptArgument{
			{Name: "goal", Description: "what the project is for, e.g. a TypeScript web API"},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		goal := req.Params.Arguments["goal"]
		if goal == "" {
			goal = "the project the user describes"
		}
		return userPrompt("Set up a project from a preset", fmt.Sprintf(
			"Help me set up %s with jig. Call list_presets to see the presets, and info on their member registries "+
				"to compare them; use search for registries to add on top. Propose one preset and explain why, "+
				"then give me the exact command to run (jig init -t @presets/<name> -n <dir>) and any jig add commands "+
				"for extra registries. Do not write files yourself.", goal)), nil
	})
	srv.AddPrompt(&mcp.Prompt{
		Name:        "bring_up_to_date",
		Title:       "Bring this project up to date",
		Description: "Find outdated registries and local drift, and plan the updates.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return userPrompt("Bring this project up to date",
			"Bring this jig project up to date. Call outdated to list the installed registries with newer versions, "+
				"and check to see which files and package.json entries I changed since jig wrote them (an update keeps "+
				"those edits with a three-way merge, but conflicts need my attention). Summarise what would change, "+
				"registry by registry, and give me the commands to run (jig update --dry-run first, then jig update "+
				"<registry> or jig update --all)."), nil
	})
}

func userPrompt(desc, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{
		Description: desc,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}
}
