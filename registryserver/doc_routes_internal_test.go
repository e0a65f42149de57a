package registryserver

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/internal/testenv"
)

// TestDocListsEveryRoute: the route list of doc.go names every route the
// handler registers (with every option that adds one), and nothing else.
func TestDocListsEveryRoute(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	type route struct{ methods, path string }
	var doc []route
	line := regexp.MustCompile(`^//\t((?:GET|HEAD|POST|PUT|PATCH|DELETE)(?:, (?:GET|HEAD|POST|PUT|PATCH|DELETE))*) +(/\S*)`)
	for _, l := range strings.Split(string(src), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			path, _, _ := strings.Cut(m[2], "?")
			doc = append(doc, route{m[1], path})
		}
	}
	h, err := New(WithStorage(testenv.MemoryStorage(t, nil)), WithMetrics(prometheus.NewRegistry()), WithWebCatalog("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	// echo's ":name" is one segment of the doc's path, a trailing "*" the rest.
	param := regexp.MustCompile(`:[a-z]+`)
	used := make([]bool, len(doc))
	for _, r := range h.e.Routes() {
		p, star := strings.CutSuffix(r.Path, "*")
		p = param.ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)
		if star {
			p += ".*"
		}
		re := regexp.MustCompile("^" + p + "$")
		found := false
		for i, d := range doc {
			if slices.Contains(strings.Split(d.methods, ", "), r.Method) && re.MatchString(d.path) {
				found, used[i] = true, true
			}
		}
		if !found {
			t.Errorf("route %s %s is not in doc.go's route list", r.Method, r.Path)
		}
	}
	for i, d := range doc {
		if !used[i] {
			t.Errorf("doc.go lists %s %s, which no route serves", d.methods, d.path)
		}
	}
}
