package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// mcpSessions are the 'jig mcp' servers started with "mcp start", by
// script.
var mcpSessions sync.Map // *testscript.TestScript -> *mcp.ClientSession

// [!] mcp tool [json-args]: calls tool of the built 'jig mcp', run as a
// subprocess in the script's directory and environment and reached over
// stdio with the SDK's client; the structured result (or, for a tool
// error, its message) becomes stdout. With !, the call must be a tool
// error. A successful plan call sets $PLAN_ID to the plan's id.
//
// Without a session each call starts its own server. "mcp start [flags]"
// starts one server (jig mcp flags...) that every later call of the script
// uses, so a plan made in one call can be applied in another; "mcp stop"
// ends it. "mcp tools" lists the tool names, one a line; "mcp read uri"
// reads a resource; "mcp prompts" gets every prompt.
func cmdMCP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: [!] mcp tool [json-args] | mcp start [flags] | mcp stop")
	}
	switch args[0] {
	case "start":
		if _, ok := mcpSessions.Load(ts); ok {
			ts.Fatalf("mcp start: a session is running; mcp stop first")
		}
		cs, stop := connectMCP(ts, args[1:])
		mcpSessions.Store(ts, cs)
		ts.Defer(func() {
			if _, ok := mcpSessions.LoadAndDelete(ts); ok {
				stop()
			}
		})
		return
	case "stop":
		v, ok := mcpSessions.LoadAndDelete(ts)
		if !ok {
			ts.Fatalf("mcp stop: no session is running")
		}
		ts.Check(v.(*mcp.ClientSession).Close())
		return
	}
	if len(args) > 2 {
		ts.Fatalf("usage: [!] mcp tool [json-args]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cs *mcp.ClientSession
	if v, ok := mcpSessions.Load(ts); ok {
		cs = v.(*mcp.ClientSession)
	} else {
		var stop func()
		cs, stop = connectMCP(ts, nil)
		defer stop()
	}
	if args[0] == "tools" {
		res, err := cs.ListTools(ctx, nil)
		ts.Check(err)
		for _, t := range res.Tools {
			if t.InputSchema == nil || t.OutputSchema == nil {
				ts.Fatalf("tool %s has no input or output schema", t.Name)
			}
			fmt.Fprintln(ts.Stdout(), t.Name)
		}
		return
	}
	if args[0] == "prompts" {
		res, err := cs.ListPrompts(ctx, nil)
		ts.Check(err)
		for _, p := range res.Prompts {
			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: map[string]string{}})
			ts.Check(err)
			fmt.Fprintf(ts.Stdout(), "%s: %s\n", p.Name, got.Messages[0].Content.(*mcp.TextContent).Text)
		}
		return
	}
	if args[0] == "read" && len(args) == 2 {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: args[1]})
		if (err != nil) != neg {
			ts.Fatalf("reading %s: err=%v, want error %v", args[1], err, neg)
		}
		if err != nil {
			fmt.Fprintln(ts.Stdout(), err)
			return
		}
		for _, c := range res.Contents {
			fmt.Fprint(ts.Stdout(), c.Text)
		}
		return
	}
	var in map[string]any
	if len(args) == 2 {
		ts.Check(json.Unmarshal([]byte(args[1]), &in))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: args[0], Arguments: in})
	if err != nil {
		ts.Fatalf("calling %s: %v", args[0], err)
	}
	if res.IsError != neg {
		ts.Fatalf("%s: IsError=%v, want %v; content: %s", args[0], res.IsError, neg, text(res))
	}
	if res.IsError {
		fmt.Fprintln(ts.Stdout(), text(res))
		return
	}
	out, err := json.MarshalIndent(res.StructuredContent, "", "  ")
	ts.Check(err)
	fmt.Fprintln(ts.Stdout(), string(out))
	if args[0] == "plan" {
		var p struct {
			PlanID string `json:"planId"`
		}
		ts.Check(json.Unmarshal(out, &p))
		ts.Setenv("PLAN_ID", p.PlanID)
	}
}

// connectMCP starts 'jig mcp flags...' in the script's directory and
// connects to it; stop closes the session and waits for the server.
func connectMCP(ts *testscript.TestScript, flags []string) (*mcp.ClientSession, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(filepath.Join(binDir, "jig"), append([]string{"mcp"}, flags...)...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"HOME", "PATH", "JIG_REGISTRY_URL", "JIG_CONFIG", "JIG_CACHE_DIR", "JIG_TIMEOUT"} {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "jig-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		ts.Fatalf("connecting to jig mcp: %v\n%s", err, stderr.String())
	}
	return cs, func() { _ = cs.Close() }
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
