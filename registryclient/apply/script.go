package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
)

// harness loads a merge script (ES module or CommonJS) and calls its merge
// function with the reference tool's parameters: merge({file, filePath,
// currentContent, incomingContent}, {language}) returning {content,
// warnings?} (or a string). Input comes as JSON on stdin, the result goes
// as JSON to stdout.
const harness = `import { pathToFileURL } from 'node:url';
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const mod = await import(pathToFileURL(process.argv[2]).href);
const pick = (m) => m && (typeof m.merge === 'function' ? m.merge : typeof m === 'function' ? m : undefined);
const fn = pick(mod) ?? pick(mod.default);
if (typeof fn !== 'function') throw new Error('the script exports no merge function');
const res = await fn({ file: input.file, filePath: input.filePath, currentContent: input.currentContent, incomingContent: input.incomingContent }, { language: input.language });
const out = typeof res === 'string' ? { content: res } : res;
if (!out || typeof out.content !== 'string') throw new Error('merge must return {content: string}');
process.stdout.write(JSON.stringify({ content: out.content, warnings: Array.isArray(out.warnings) ? out.warnings.map(String) : [] }));
`

// maxScriptOutput bounds what a merge script may print.
const maxScriptOutput = 16 << 20

type scriptResult struct {
	Content  string   `json:"content"`
	Warnings []string `json:"warnings"`
}

type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, errors.New("output too large")
	}
	return b.Buffer.Write(p)
}

// runScript runs a custom merge script with node in a fresh temporary
// directory that is always removed.
func (e *Engine) runScript(ctx context.Context, script []byte, scriptPath, target string, current []byte, exists bool, incoming []byte, lang registry.Language) (*scriptResult, error) {
	dir, err := os.MkdirTemp("", "jig-merge-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ext := path.Ext(scriptPath)
	switch ext {
	case ".mjs", ".cjs", ".js":
	default:
		ext = ".js"
	}
	plugin := filepath.Join(dir, "plugin"+ext)
	if err := os.WriteFile(plugin, script, 0o600); err != nil {
		return nil, err
	}
	h := filepath.Join(dir, "harness.mjs")
	if err := os.WriteFile(h, []byte(harness), 0o600); err != nil {
		return nil, err
	}
	var cur any
	if exists {
		cur = string(current)
	}
	in, err := json.Marshal(map[string]any{
		"file": path.Base(target), "filePath": target, "currentContent": cur,
		"incomingContent": string(incoming), "language": string(lang),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.opts.node, h, plugin)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	stdout := &limitedBuffer{max: maxScriptOutput}
	stderr := &limitedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: node was not found (%s); install Node.js to run custom merge scripts", ErrScript, scriptPath, e.opts.node)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("%w: %s did not finish within %v", ErrScript, scriptPath, e.opts.scriptTimeout)
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return nil, fmt.Errorf("%w: %s: %v: %s", ErrScript, scriptPath, err, msg)
	}
	var res scriptResult
	if err := registry.CheckJSONDepth(scriptPath+"'s result", stdout.Bytes()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScript, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("%w: %s printed something that is not its result: %v", ErrScript, scriptPath, err)
	}
	return &res, nil
}
