package core

import "strings"

// ShortText cuts s for an error message.
func ShortText(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
