package wire

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readmeCodes parses the table under the "Error codes" heading of docs/http-api.md:
// code to status, 0 for "other".
func readmeCodes(t *testing.T) map[Code]int {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "http-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[Code]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimLeft(line, "#") == " Error codes"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("docs/http-api.md error table: malformed row %q", line)
		}
		code := Code(strings.Trim(strings.TrimSpace(cells[1]), "`"))
		status := 0
		if s := strings.TrimSpace(cells[2]); s != "other" {
			if status, err = strconv.Atoi(s); err != nil {
				t.Fatalf("docs/http-api.md error table: status of %s: %v", code, err)
			}
		}
		if _, dup := got[code]; dup {
			t.Fatalf("docs/http-api.md error table: %s appears twice", code)
		}
		got[code] = status
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal(`docs/http-api.md has no "Error codes" table`)
	}
	return got
}

// TestCodesMatchDocs walks the code table against docs/http-api.md's error
// table, both ways: the same codes with the same statuses.
func TestCodesMatchDocs(t *testing.T) {
	doc := readmeCodes(t)
	seen := map[Code]bool{}
	for _, r := range codes {
		if seen[r.code] {
			t.Errorf("%s appears twice in the table", r.code)
		}
		seen[r.code] = true
		st, ok := doc[r.code]
		switch {
		case !ok:
			t.Errorf("%s (%d) is missing from docs/http-api.md's error table", r.code, r.status)
		case st != r.status:
			t.Errorf("%s: docs/http-api.md says %d, the table %d", r.code, st, r.status)
		}
		if r.code.Status() != r.status {
			t.Errorf("%s.Status() = %d, want %d", r.code, r.code.Status(), r.status)
		}
	}
	for c := range doc {
		if !seen[c] {
			t.Errorf("docs/http-api.md's error table lists %s, which package wire does not know", c)
		}
	}
}

func TestCodeForStatus(t *testing.T) {
	for _, c := range genericCodes {
		if got := CodeForStatus(c.Status()); got != c {
			t.Errorf("CodeForStatus(%d) = %s, want %s", c.Status(), got, c)
		}
	}
	if got := CodeForStatus(418); got != CodeHTTPError {
		t.Errorf("CodeForStatus(418) = %s, want HTTP_ERROR", got)
	}
}
