package cli

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/jigkit/jig/registry/wire"
)

// historyFlag is "jig fleet status --history[=90d]": off (0 days), or the
// days of census history to show.
type historyFlag struct {
	days int
}

// IsBool makes --history take no value of its own: "--history" alone is
// [wire.DefaultCensusHistoryDays], another window needs "="
// (--history=30d).
func (*historyFlag) IsBool() bool { return true }

// Decode reads "--history", "--history=30d" and "--history=true|false".
func (h *historyFlag) Decode(ctx *kong.DecodeContext) error {
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		h.days = wire.DefaultCensusHistoryDays
		return nil
	}
	switch v := ctx.Scan.Pop().Value.(type) {
	case bool:
		h.days = map[bool]int{true: wire.DefaultCensusHistoryDays}[v]
		return nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1", "yes":
			h.days = wire.DefaultCensusHistoryDays
			return nil
		case "false", "0", "no":
			h.days = 0
			return nil
		}
		days, err := wire.ParseCensusHistory(v)
		if err != nil {
			return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), wire.ErrInvalidHistory.Error()+": "))
		}
		h.days = days
		return nil
	}
	return fmt.Errorf("want a number of days such as --history=30d")
}
