package registryserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
)

// TestCensusHistoryWebCatalog: the registry page's "In use" shows the
// adoption chart, from the history, to every reader of the namespace
// (counts only, like the table), with how many projects are behind; a
// registry no project reported has none; without the census there is
// none.
func TestCensusHistoryWebCatalog(t *testing.T) {
	t.Parallel()
	h, db := historyHandler(t)
	plant(t, db, "@pub", "a", "1.0.0", wire.CensusClean)
	plant(t, db, "@pub", "b", "1.0.0", wire.CensusClean)
	recordDay(t, db, historyDay(2))
	plant(t, db, "@pub", "a", "2.0.0", wire.CensusClean)
	recordDay(t, db, historyDay(1))
	plant(t, db, "@pub", "c", "2.0.0", wire.CensusModified)
	resp, body := page(t, h, http.MethodGet, "/-/r/@pub/x", "", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	for _, want := range []string{
		`<svg class="adoption" id="adoption"`,
		`<title id="adoption-title">Projects per version of @pub/x</title>`,
		`<p id="behind">1 project of 3 is behind the latest version, 2.0.0 (2 on it).</p>`,
		`<li class="latest"><span class="swatch s0" aria-hidden="true"></span>2.0.0 (latest): 2 now</li>`,
		`<tr><td>2026-03-02</td><td>0</td><td>2</td><td>2</td></tr>`,
		`<td>2.0.0</td><td>2</td><td>1</td><td>1</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<script>") {
		t.Errorf("the page holds a style attribute or an inline script")
	}
	if _, body := page(t, h, http.MethodGet, "/-/r/@stash/x", signIn(t, h, "/", adminToken), nil, nil); strings.Contains(body, "adoption") {
		t.Errorf("a registry nobody reported has a chart")
	}
	off, _ := historyHandler(t, registryserver.WithCensus(registryserver.CensusOff))
	if _, body := page(t, off, http.MethodGet, "/-/r/@pub/x", "", nil, nil); strings.Contains(body, "adoption") || strings.Contains(body, "In use") {
		t.Errorf("census off: the page shows the census")
	}
}
