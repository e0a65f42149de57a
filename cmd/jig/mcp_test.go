package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// [!] mcp tool [json-args]: starts the built 'jig mcp' as a subprocess in
// the script's directory and environment, connects to it over stdio with
// the SDK's client and calls tool; the structured result (or, for a tool
// error, its message) becomes stdout. With !, the call must be a tool
// error. "mcp tools" lists the tool names, one a line; "mcp read uri"
// reads a resource.
func cmdMCP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: [!] mcp tool [json-args]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(filepath.Join(binDir, "jig"), "mcp")
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
	defer cs.Close()
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
		ts.Fatalf("calling %s: %v\n%s", args[0], err, stderr.String())
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
