package merge

import (
	"bytes"
	"fmt"
	"strings"
)

// Bounds of the line diff. Inputs beyond them are still merged, but
// coarsely: the differing middle (after the common prefix and suffix) is
// treated as one changed block, so a three-way merge of such files becomes
// one conflict when both sides changed it, never a wrong clean result.
const (
	// maxDiffEdits caps the edit distance the O(ND) diff explores. Its
	// memory is O(D²) 32-bit integers (4 MiB at the cap), its time
	// O((N+M)·D).
	maxDiffEdits = 1024
	// maxDiffLines caps the number of differing lines (both sides
	// together, after the common prefix and suffix are removed).
	maxDiffLines = 200_000
)

// lineTable interns lines so that the diff compares integers.
type lineTable map[string]int32

func (t lineTable) ids(lines []string) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		id, ok := t[l]
		if !ok {
			id = int32(len(t))
			t[l] = id
		}
		out[i] = id
	}
	return out
}

// matchLines computes a longest common subsequence of a and b and returns,
// for every index of a, the index of b it is matched with, or -1. The
// matching is strictly increasing. Beyond the bounds above only the common
// prefix and suffix are matched.
func matchLines(a, b []int32) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		m[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		m[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) == 0 || len(mb) == 0 || len(ma)+len(mb) > maxDiffLines {
		return m
	}
	for _, p := range myers(ma, mb, maxDiffEdits) {
		m[pre+p[0]] = pre + p[1]
	}
	return m
}

// myers is Myers' O(ND) greedy diff ("An O(ND) Difference Algorithm and
// Its Variations", 1986). It returns the matched index pairs in increasing
// order, or nil when more than maxD edits are needed.
func myers(a, b []int32, maxD int) [][2]int {
	n, m := len(a), len(b)
	if maxD > n+m {
		maxD = n + m
	}
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	// trace[d] is v over k in [-(d-1), d-1] before round d.
	trace := make([][]int32, 0, 16)
	for d := 0; d <= maxD; d++ {
		snap := make([]int32, 0, 2*d+1)
		if d > 0 {
			snap = append(snap, v[off-(d-1):off+d]...)
		}
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return backtrack(trace, d, n, m)
			}
		}
	}
	return nil
}

func backtrack(trace [][]int32, dEnd, n, m int) [][2]int {
	var out [][2]int
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		vv := trace[d]
		at := func(k int) int { return int(vv[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		// The snake after the edit.
		sx := px
		if pk == k-1 {
			sx = px + 1
		}
		for x > sx {
			x--
			y--
			out = append(out, [2]int{x, y})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		out = append(out, [2]int{x, y})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// splitKeepLines splits LF text into lines, each keeping its "\n" (the
// last one may lack it), so that joining them gives the input back.
func splitKeepLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// UnifiedDiff returns the unified diff (3 lines of context, "---
// a/<name>" and "+++ b/<name>" headers) that turns before into after, or
// "" when they are equal. A missing side is written as /dev/null when its
// exists flag is false. Lines are compared byte for byte, CR included; a
// last line without a newline is marked "\ No newline at end of file".
func UnifiedDiff(name string, before []byte, beforeExists bool, after []byte, afterExists bool) string {
	if beforeExists == afterExists && bytes.Equal(before, after) {
		return ""
	}
	return unifiedDiff(name, name, before, beforeExists, after, afterExists)
}

// RenameDiff returns the diff of a file moved from the name from to the
// name to, as git writes a rename: a "diff --git a/<from> b/<to>" line,
// "rename from <from>" and "rename to <to>", then, when the content
// changed too, the unified diff of [UnifiedDiff] from "a/<from>" to
// "b/<to>". git apply applies it.
func RenameDiff(from, to string, before, after []byte) string {
	head := "diff --git a/" + from + " b/" + to + "\nrename from " + from + "\nrename to " + to + "\n"
	if bytes.Equal(before, after) {
		return head
	}
	return head + unifiedDiff(from, to, before, true, after, true)
}

// unifiedDiff is [UnifiedDiff] with the names of the two sides.
func unifiedDiff(fromName, toName string, before []byte, beforeExists bool, after []byte, afterExists bool) string {
	a, b := splitKeepLines(before), splitKeepLines(after)
	t := lineTable{}
	m := matchLines(t.ids(a), t.ids(b))
	// ops: ' ', '-', '+' with line indexes.
	type op struct {
		kind byte
		ai   int
		bi   int
	}
	var ops []op
	j := 0
	for i := range a {
		if m[i] < 0 {
			ops = append(ops, op{'-', i, j})
			continue
		}
		for ; j < m[i]; j++ {
			ops = append(ops, op{'+', i, j})
		}
		ops = append(ops, op{' ', i, j})
		j++
	}
	for ; j < len(b); j++ {
		ops = append(ops, op{'+', len(a), j})
	}
	var sb strings.Builder
	from, to := "a/"+fromName, "b/"+toName
	if !beforeExists {
		from = "/dev/null"
	}
	if !afterExists {
		to = "/dev/null"
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after
		// the last change that is within 2*ctx lines of the previous.
		start := i - ctx
		if start < 0 {
			start = 0
		}
		end := i
		for k := i; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k
				continue
			}
			if k-end > 2*ctx {
				break
			}
		}
		stop := end + ctx + 1
		if stop > len(ops) {
			stop = len(ops)
		}
		var aStart, aLen, bStart, bLen int
		aStart, bStart = ops[start].ai, ops[start].bi
		for _, o := range ops[start:stop] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:stop] {
			line := ""
			switch o.kind {
			case '-', ' ':
				line = a[o.ai]
			case '+':
				line = b[o.bi]
			}
			sb.WriteByte(o.kind)
			sb.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
