package jsonschema

import (
	"math"
	"strconv"
	"strings"
)

// The library printed its messages with golang.org/x/text/message in
// English; these helpers write the same text without linking it.

// quote single-quotes s as the library did: Go's %q with \" unescaped and
// ' escaped.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

func joinQuoted(list []string) string {
	var sb strings.Builder
	for i, s := range list {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(quote(s))
	}
	return sb.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// formatInt is English %d: digits grouped by three with commas.
func formatInt(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	return sign + group(s)
}

// formatFloat is English %v of a float64: Go's shortest %g with the
// integer part grouped by three, "e±XX" written "×10" with superscript
// digits, ±Inf as ±∞ and negative zero as 0.
func formatFloat(f float64) string {
	switch {
	case f == 0:
		return "0"
	case math.IsInf(f, 1):
		return "∞"
	case math.IsInf(f, -1):
		return "-∞"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, exp, hasExp := strings.Cut(s, "e")
	intPart, frac, hasFrac := strings.Cut(mant, ".")
	var sb strings.Builder
	sb.WriteString(sign)
	sb.WriteString(group(intPart))
	if hasFrac {
		sb.WriteByte('.')
		sb.WriteString(frac)
	}
	if hasExp {
		sb.WriteString("×10")
		for _, c := range exp {
			switch c {
			case '-':
				sb.WriteString("⁻")
			case '+':
			default:
				sb.WriteString(superscripts[c-'0'])
			}
		}
	}
	return sb.String()
}

var superscripts = [10]string{"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}

// group inserts a comma every three digits from the right.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var sb strings.Builder
	first := len(digits) % 3
	if first == 0 {
		first = 3
	}
	sb.WriteString(digits[:first])
	for i := first; i < len(digits); i += 3 {
		sb.WriteByte(',')
		sb.WriteString(digits[i : i+3])
	}
	return sb.String()
}
