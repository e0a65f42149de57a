package forge

import (
	"strings"
	"testing"
)

func TestParseRemote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want Repo
		err  string
	}{
		{in: "https://gitea.example.com/acme/api.git", want: Repo{Base: "https://gitea.example.com", Owner: "acme", Name: "api"}},
		{in: "http://127.0.0.1:3000/acme/api", want: Repo{Base: "http://127.0.0.1:3000", Owner: "acme", Name: "api"}},
		{in: "https://git.example.com/gitea/acme/api.git", want: Repo{Base: "https://git.example.com/gitea", Owner: "acme", Name: "api"}},
		{in: "ssh://git@gitea.example.com:2222/acme/api.git", want: Repo{Base: "https://gitea.example.com", Owner: "acme", Name: "api"}},
		{in: "git@codeberg.org:acme/api.git", want: Repo{Base: "https://codeberg.org", Owner: "acme", Name: "api"}},
		{in: "https://user:tok@gitea.example.com/acme/api.git", want: Repo{Base: "https://gitea.example.com", Owner: "acme", Name: "api"}},
		{in: "/srv/git/api.git", err: "local repository"},
		{in: "https://gitea.example.com/api.git", err: "no owner/repository"},
		{in: "https://gitea.example.com/acme/..", err: "not an owner or repository"},
		{in: "file:///srv/acme/api.git", err: "https or ssh"},
	} {
		got, err := ParseRemote(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRemote(%q): got %+v, %v; want an error with %q", c.in, got, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseRemote(%q): %v", c.in, err)
		case got != c.want:
			t.Errorf("ParseRemote(%q): got %+v, want %+v", c.in, got, c.want)
		}
	}
}

// FuzzParseRemote: a parsed repository has an owner and a name that are
// single path segments, never "." or "..", and a base with no user
// information (no credentials reach the API's address).
func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{"https://gitea.example.com/acme/api.git", "git@h:a/b", "ssh://u@h:22/x/y/z.git", "https://u:p@h/a/b", "https://h/%2e%2e/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRemote(s)
		if err != nil {
			return
		}
		for _, p := range []string{r.Owner, r.Name} {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\?#%") {
				t.Fatalf("ParseRemote(%q) = %+v: owner/name %q is not one path segment", s, r, p)
			}
		}
		if strings.Contains(r.Base, "@") && !strings.Contains(s, "@") {
			t.Fatalf("ParseRemote(%q): base %q", s, r.Base)
		}
		if i := strings.Index(r.Base, "://"); i < 0 || strings.Contains(r.Base[i+3:strings.IndexByte(r.Base[i+3:]+"/", '/')+i+3], "@") {
			t.Fatalf("ParseRemote(%q): base %q has user information", s, r.Base)
		}
	})
}
