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
		Description: "Pick a preset with the user, plan the new project, show the plan and apply it once agreed.",
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
				"to compare them; use search for registries to add on top. Propose one preset and explain why. "+
				"Then call plan with command init, the preset (@presets/<name>) and a dir for the new project, "+
				"and show me the plan: the registries, every file it creates or changes, the package.json changes and "+
				"the warnings. Call apply with its planId only after I agree. Plan and apply each extra registry the same "+
				"way (command add, in the new project's dir). If apply says the project changed, plan again and show me "+
				"the new plan. Never write the files yourself.", goal)), nil
	})
	srv.AddPrompt(&mcp.Prompt{
		Name:        "bring_up_to_date",
		Title:       "Bring this project up to date",
		Description: "Find outdated registries and local drift, plan the updates, show them and apply them once agreed.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return userPrompt("Bring this project up to date",
			"Bring this jig project up to date. Call outdated to list the installed registries with newer versions, "+
				"and check to see which files and package.json entries I changed since jig wrote them (an update keeps "+
				"those edits with a three-way merge, but conflicts need my attention). Then call plan with command update "+
				"(one registry, or none for all of them) and show me the plan, registry by registry: the version moves, the "+
				"diffs, the conflicts and the warnings. Call apply with its planId only after I agree; if it says the project "+
				"changed, plan again and show me the new plan. Afterwards, help me resolve any conflicts and call check."), nil
	})
}

func userPrompt(desc, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{
		Description: desc,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}
}
