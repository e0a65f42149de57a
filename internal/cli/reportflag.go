package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/jigkit/jig/registry"
)

// reportFlag is "jig check --report[=@ns,...]": off, on for every
// namespace the project uses (--report alone), or on for the namespaces
// listed.
type reportFlag struct {
	on bool
	// only are the namespaces to report to, sorted; nil with on: all.
	only []string
}

// IsBool makes --report take no value of its own: "--report" alone means
// every namespace, and a list needs "=" (--report=@team,@main).
func (*reportFlag) IsBool() bool { return true }

// Decode reads "--report" (every namespace), "--report=@a,@b", and
// "--report=true|false" as the flag read when it was a plain switch.
func (r *reportFlag) Decode(ctx *kong.DecodeContext) error {
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		*r = reportFlag{on: true}
		return nil
	}
	tok := ctx.Scan.Pop()
	switch v := tok.Value.(type) {
	case bool: // --no-report and the like, should the flag ever get one
		*r = reportFlag{on: v}
		return nil
	case string:
		f, err := parseReportFlag(v)
		if err != nil {
			return err
		}
		*r = f
		return nil
	}
	return fmt.Errorf("want the namespaces to report to, such as --report=@team,@main")
}

// parseReportFlag reads the value of --report=: namespaces separated by
// commas ("@" optional, blanks trimmed), or true / false.
func parseReportFlag(s string) (reportFlag, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return reportFlag{on: true}, nil
	case "false", "0", "no":
		return reportFlag{}, nil
	}
	var only []string
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			return reportFlag{}, fmt.Errorf("%q names an empty namespace: list namespaces separated by commas, such as --report=@team,@main (or give --report alone for every namespace the project uses)", s)
		}
		ns, err := registry.ParseNamespace(registry.NormalizeNamespace(part))
		if err != nil {
			return reportFlag{}, err
		}
		only = append(only, ns)
	}
	slices.Sort(only)
	return reportFlag{on: true, only: slices.Compact(only)}, nil
}

// choose returns the namespaces among used (sorted, the namespaces of the
// project's registries) to send a census report to, and warns about the
// namespaces --report= lists that the project does not use.
func (r reportFlag) choose(o *Output, used []string) []string {
	if r.only == nil {
		return used
	}
	var chosen, unused []string
	for _, ns := range r.only {
		if slices.Contains(used, ns) {
			chosen = append(chosen, ns)
		} else {
			unused = append(unused, ns)
		}
	}
	if len(unused) > 0 {
		uses := "no registry at all"
		if len(used) > 0 {
			uses = "registries of " + strings.Join(used, ", ")
		}
		o.Warnf("the project uses no registry of %s, so no census report goes there (it uses %s)", strings.Join(unused, ", "), uses)
	}
	return chosen
}
