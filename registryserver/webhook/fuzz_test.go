package webhook_test

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/webhook"
)

// FuzzParse checks that whatever Parse accepts is usable and safe to log:
// absolute http(s) URLs, non-empty secrets, and descriptions (String) and
// warnings that never contain a secret or a URL path.
func FuzzParse(f *testing.F) {
	testenv.AddSeedFiles(f, filepath.Join("testdata", "*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := webhook.Parse(data)
		if err != nil {
			return
		}
		for _, h := range c.Webhooks {
			u, err := url.Parse(h.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("accepted URL %q", h.URL)
			}
			if h.Secret == "" {
				t.Fatal("accepted an empty secret")
			}
			s := h.String()
			if len(h.Secret) >= 4 && strings.Contains(s, h.Secret) && !strings.Contains(h.Description, h.Secret) && !strings.Contains(u.Host, h.Secret) {
				t.Fatalf("String() %q shows the secret", s)
			}
			if p := strings.Trim(u.EscapedPath(), "/"); len(p) >= 4 && strings.Contains(s, p) && !strings.Contains(h.Description, p) && !strings.Contains(u.Host, p) {
				t.Fatalf("String() %q shows the URL path %q", s, p)
			}
		}
	})
}
