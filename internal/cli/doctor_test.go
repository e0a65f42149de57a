package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/doctor"
)

// TestPrintReportSymbols: ✓/✗/⚠ only when colour is on (a terminal without
// NO_COLOR); piped output has the [LEVEL] tags alone.
func TestPrintReportSymbols(t *testing.T) {
	t.Parallel()
	rep := &doctor.Report{Results: []doctor.Result{
		{ID: "a", Category: doctor.Environment, Level: doctor.Info, Message: "fine"},
		{ID: "b", Category: doctor.Project, Level: doctor.Warning, Message: "hmm"},
		{ID: "c", Category: doctor.Remote, Level: doctor.Error, Message: "bad"},
	}}
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		printReport(newOutput(&out, &out, color, color), rep)
		got := out.String()
		has := strings.ContainsAny(got, "✓✗⚠")
		if has != color {
			t.Errorf("colour %v: got symbols %v in\n%s", color, has, got)
		}
		for _, want := range []string{"[INFO] fine", "[WARNING] hmm", "[ERROR] bad", "Found 1 error, 1 warning"} {
			if !strings.Contains(got, want) {
				t.Errorf("colour %v: got\n%s\nwant it to contain %q", color, got, want)
			}
		}
	}
}
