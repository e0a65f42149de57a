package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// CompletionCmd is "jig completion bash|zsh|fish|powershell".
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish,powershell" help:"The shell: bash, zsh, fish or powershell."`
}

// Help is shown by "jig completion --help".
func (c *CompletionCmd) Help() string {
	return `Prints a script that completes commands, flags, namespaces and registry names.
Namespaces and registries come from the configured sources, asked with a
short timeout; completion never prompts and never prints errors.

Examples:
  source <(jig completion bash)                    # bash, for this shell; add it to ~/.bashrc
  jig completion zsh > "${fpath[1]}/_jig"          # zsh
  jig completion fish > ~/.config/fish/completions/jig.fish
  jig completion powershell | Out-String | Invoke-Expression   # add to $PROFILE`
}

// completionScripts call "jig __complete <words up to the cursor>" and
// offer its lines.
var completionScripts = map[string]string{
	"bash": `# bash completion for jig
_jig() {
	local IFS=$'\n'
	local cur="${COMP_WORDS[COMP_CWORD]}"
	COMPREPLY=($(jig __complete "${COMP_WORDS[@]:1:$COMP_CWORD}" 2>/dev/null))
	[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
	return 0
}
complete -o default -F _jig jig
`,
	"zsh": `#compdef jig
# zsh completion for jig
_jig() {
	local -a candidates
	candidates=("${(@f)$(jig __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	compadd -Q -- "${(@)candidates:#}"
}
if [[ "${funcstack[1]}" == "_jig" ]]; then _jig "$@"; else compdef _jig jig; fi
`,
	"fish": `# fish completion for jig
function __jig_complete
	set -l words (commandline -opc)[2..-1] (commandline -ct)
	jig __complete $words 2>/dev/null
end
complete -c jig -f -a '(__jig_complete)'
`,
	"powershell": `# PowerShell completion for jig
Register-ArgumentCompleter -Native -CommandName jig -ScriptBlock {
	param($wordToComplete, $commandAst, $cursorPosition)
	$words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
	if ($wordToComplete -eq '') { $words += '""' }
	& jig __complete @words 2>$null | ForEach-Object {
		[System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
	}
}
`,
}

// Run prints the script for the shell.
func (c *CompletionCmd) Run(app *App) error {
	fmt.Fprint(app.Stdout, completionScripts[c.Shell]) // jig's own text
	return nil
}

// CompleteCmd is the hidden "jig __complete <words…>" the scripts call:
// the last word is the one being completed (possibly empty). It prints one
// candidate per line and always succeeds.
type CompleteCmd struct {
	Words []string `arg:"" optional:"" passthrough:"" help:"The words after jig, the last one being completed."`
}

// completionTimeout bounds every network look-up of one completion.
const completionTimeout = 1500 * time.Millisecond

// Run prints the candidates for the last word.
func (c *CompleteCmd) Run(ctx context.Context, app *App, k *kong.Kong) error {
	words := c.Words
	if len(words) == 0 {
		words = []string{""}
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	for _, cand := range complete(ctx, app, k.Model.Node, words) {
		app.Out.Println(cand)
	}
	return nil
}

// complete walks the command tree along words and returns the candidates
// for the last word, sorted and filtered by its prefix.
func complete(ctx context.Context, app *App, node *kong.Node, words []string) []string {
	cur, prev := words[len(words)-1], words[:len(words)-1]
	flags := slices.Clone(node.Flags)
	var pending *kong.Flag // a flag still waiting for its value
	positional := 0
	for _, w := range prev {
		if pending != nil {
			pending = nil
			continue
		}
		if strings.HasPrefix(w, "-") {
			if f := findFlag(flags, w); f != nil && !f.IsBool() && !strings.Contains(w, "=") {
				pending = f
			}
			continue
		}
		if child := findChild(node, w); child != nil {
			node = child
			flags = append(flags, node.Flags...)
			positional = 0
			continue
		}
		positional++
	}
	var out []string
	switch {
	case pending != nil:
		out = flagValues(ctx, app, pending, cur)
	case strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		name, val, _ := strings.Cut(cur, "=")
		if f := findFlag(flags, name); f != nil {
			for _, v := range flagValues(ctx, app, f, val) {
				out = append(out, name+"="+v)
			}
		}
	case strings.HasPrefix(cur, "-"):
		for _, f := range flags {
			if !f.Hidden {
				out = append(out, "--"+f.Name)
			}
		}
	default:
		for _, child := range node.Children {
			if !child.Hidden {
				out = append(out, child.Name)
				out = append(out, child.Aliases...)
			}
		}
		if positional < len(node.Positional) {
			out = append(out, argValues(ctx, app, node, node.Positional[positional].Name, cur)...)
		}
	}
	return filterPrefix(out, cur)
}

func findChild(node *kong.Node, w string) *kong.Node {
	for _, c := range node.Children {
		if c.Name == w || slices.Contains(c.Aliases, w) {
			return c
		}
	}
	return nil
}

func findFlag(flags []*kong.Flag, w string) *kong.Flag {
	name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
	for _, f := range flags {
		if f.Name == name || (len(name) == 1 && f.Short == rune(name[0])) || slices.Contains(f.Aliases, name) {
			return f
		}
	}
	return nil
}

// flagValues completes a flag's value: enums, namespaces and templates.
func flagValues(ctx context.Context, app *App, f *kong.Flag, cur string) []string {
	if enum := f.EnumSlice(); len(enum) > 0 && f.Enum != "" {
		return enum
	}
	switch f.Name {
	case "type":
		return searchTypes()
	case "registry":
		return configuredNamespaces(app)
	case "template":
		return templates(ctx, app, cur)
	}
	return nil
}

// argValues completes a positional argument by its name.
func argValues(ctx context.Context, app *App, node *kong.Node, arg, cur string) []string {
	switch {
	case arg == "shell":
		return []string{"bash", "zsh", "fish", "powershell"}
	case arg == "namespace":
		return append(configuredNamespaces(app), registry.PresetNamespace)
	case (arg == "registry" || arg == "registries") && slices.Contains([]string{"update", "remove", "diff"}, node.Name):
		return installedRegistries()
	case arg == "registry" || arg == "registries" || arg == "id" || arg == "ids":
		return registryIDs(ctx, app, cur)
	}
	return nil
}

// installedRegistries lists the registries the jig.json of the current
// directory records (what update, remove and diff take); no network.
func installedRegistries() []string {
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	proj, err := apply.ReadProject(dir)
	if err != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(proj.Installed))
}

// configuredNamespaces lists the rc file's namespaces (built-ins
// included); no network.
func configuredNamespaces(app *App) []string {
	cfg, err := app.Config()
	if err != nil {
		return nil
	}
	return cfg.List()
}

// registryIDs lists registry ids matching cur: "@ns/" completes the
// namespace's registries, a word without "@" those of the default
// namespace, and "@" the namespaces.
func registryIDs(ctx context.Context, app *App, cur string) []string {
	if strings.HasPrefix(cur, "@") && !strings.Contains(cur, "/") {
		var out []string
		for _, ns := range namespacesOnline(ctx, app) {
			out = append(out, ns+"/")
		}
		return out
	}
	ns, prefix := registry.DefaultNamespace, ""
	if strings.HasPrefix(cur, "@") {
		ns, _, _ = strings.Cut(cur, "/")
		prefix = ns + "/"
	}
	if ns == registry.PresetNamespace {
		return nil
	}
	cl, err := app.Client(ns)
	if err != nil {
		return nil
	}
	regs, err := cl.Registries(ctx, ns)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(regs))
	for _, r := range regs {
		out = append(out, prefix+r)
	}
	return out
}

// namespacesOnline merges the configured namespaces with those each
// configured source lists, asked concurrently.
func namespacesOnline(ctx context.Context, app *App) []string {
	seen := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ns := range configuredNamespaces(app) {
		seen[ns] = true
		wg.Go(func() {
			cl, err := app.Client(ns)
			if err != nil {
				return
			}
			list, err := cl.Namespaces(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, n := range list {
				seen[n] = true
			}
		})
	}
	wg.Wait()
	delete(seen, registry.PresetNamespace)
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	return out
}

// templates completes init -t: presets, then registry ids.
func templates(ctx context.Context, app *App, cur string) []string {
	var out []string
	if strings.HasPrefix(registry.PresetNamespace+"/", cur) || strings.HasPrefix(cur, registry.PresetNamespace+"/") {
		if cl, err := app.Client(registry.PresetNamespace); err == nil {
			if ps, err := cl.Presets(ctx); err == nil {
				for _, p := range ps {
					out = append(out, registry.PresetNamespace+"/"+p.Name)
				}
			}
		}
	}
	if !strings.HasPrefix(cur, registry.PresetNamespace) {
		out = append(out, registryIDs(ctx, app, cur)...)
	}
	return out
}

// filterPrefix keeps the candidates starting with prefix, sorted, once.
func filterPrefix(cands []string, prefix string) []string {
	var out []string
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
