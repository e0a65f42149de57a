// Package wildcard matches text against the simplest of patterns: "*"
// stands for any run of bytes (none included), "?" for one byte, and
// every other byte for itself. There is no escape and no class; a caller
// that has path separators splits on them first. It is what the signers'
// allowed-signers principals ("*@example.com") and the parts of a
// CODEOWNERS pattern need.
package wildcard

// Match reports whether s matches pattern, in O(len(s)*len(pattern)) at
// worst: a greedy scan that backtracks only to the last "*".
func Match(pattern, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			// First: a "*" in the pattern is a wildcard even where s
			// has a "*" too.
			star, mark = pi, si
			pi++
		case pi < len(pattern) && (pattern[pi] == '?' || pattern[pi] == s[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}
