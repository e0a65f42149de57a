package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// githubExample is the example CODEOWNERS file of GitHub's documentation
// (the patterns and what they are documented to match).
const githubExample = `# These owners will be the default owners for everything in the repo.
*       @global-owner1 @global-owner2

# Order is important; the last matching pattern takes the most precedence.
*.js    @js-owner #This is an inline comment.

*.go docs@example.com

*.txt @octo-org/octocats

/build/logs/ @doctocat

docs/*  docs@example.com

apps/ @octocat

/docs/ @doctocat

/scripts/ @doctocat @octocat

**/logs @octocat

/apps/ @octocat
/apps/github

/examples/ @octocat
/examples/foo.md @user1
`

// TestCodeownersGitHubExample: the last matching rule wins, with the
// matches GitHub documents for each pattern.
func TestCodeownersGitHubExample(t *testing.T) {
	t.Parallel()
	c, err := ParseCodeowners([]byte(githubExample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"README.md", []string{"@global-owner1", "@global-owner2"}},
		{"src/app.js", []string{"@js-owner"}},
		{"main.go", []string{"docs@example.com"}},
		{"notes/a.txt", []string{"@octo-org/octocats"}},
		{"build/logs/today.log", []string{"@octocat"}}, // **/logs comes later
		{"build/out/x.bin", []string{"@global-owner1", "@global-owner2"}},
		{"docs/getting-started.md", []string{"@doctocat"}},                 // /docs/ comes after docs/*
		{"docs/build-app/troubleshooting.md", []string{"@doctocat"}},       // /docs/ owns the subtree
		{"src/docs/x.md", []string{"@global-owner1", "@global-owner2"}},    // docs/* is anchored
		{"web/apps/main.css", []string{"@octocat"}},                        // apps/ at any depth
		{"apps/github/x.css", nil},                                         // /apps/github has no owner
		{"apps/other/x.css", []string{"@octocat"}},                         //
		{"scripts/deploy.sh", []string{"@doctocat", "@octocat"}},           //
		{"deeply/nested/logs/x.txt", []string{"@octocat"}},                 // **/logs
		{"examples/foo.md", []string{"@user1"}},                            //
		{"examples/bar.md", []string{"@octocat"}},                          //
		{"examples/sub/foo.md", []string{"@octocat"}},                      // /examples/foo.md is anchored
		{"logs", []string{"@octocat"}},                                     // **/logs matches the file too
		{"src/apps", []string{"@global-owner1", "@global-owner2"}},         // apps/ is a directory only
		{"build/logs", []string{"@octocat"}},                               // **/logs, not /build/logs/
		{"a.js/b.css", []string{"@global-owner1", "@global-owner2"}},       // *.js does not own a directory's contents
		{"docs/sub/deeper/and/deeper/still.md", []string{"@doctocat"}},     //
		{"x/y/z.txt", []string{"@octo-org/octocats"}},                      //
		{"apps/github", nil},                                               // the file apps/github too
		{"APPS/other/x.css", []string{"@global-owner1", "@global-owner2"}}, // case matters
		{"build/logs/deeper/x.txt", []string{"@octocat"}},                  //
	} {
		if got := c.Owners(tc.file); !cmp.Equal(got, tc.want) {
			t.Errorf("Owners(%q): got %q, want %q", tc.file, got, tc.want)
		}
	}
}

// TestCodeownersSyntax: comments and escapes, GitLab's sections (each
// section's last match, the sections together; default owners), and the
// bounds.
func TestCodeownersSyntax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, path string
		want             []string
		err              string
	}{
		{"escaped hash", `\#notes.md @a`, "#notes.md", []string{"@a"}, ""},
		{"escaped space", `my\ file.md @a`, "my file.md", []string{"@a"}, ""},
		{"root slash", "/ @root", "any/where.go", []string{"@root"}, ""},
		{"question mark", "file?.md @q", "file1.md", []string{"@q"}, ""},
		{"double star in the middle", "a/**/z.md @d", "a/b/c/z.md", []string{"@d"}, ""},
		{"double star zero parts", "a/**/z.md @d", "a/z.md", []string{"@d"}, ""},
		{"a bracket is a character", "[abc].md @b", "[abc].md", []string{"@b"}, ""},
		{"a bracket matches no range", "[abc].md @b", "a.md", nil, ""},
		{"sections combine", "* @all\n[Docs]\ndocs/ @writers\n[Go][2]\n*.go @gophers\n", "docs/x.go", []string{"@all", "@writers", "@gophers"}, ""},
		{"section default owners", "[Docs] @writers\ndocs/\n", "docs/x.md", []string{"@writers"}, ""},
		{"optional section", "^[Docs] @writers\ndocs/\n", "docs/x.md", []string{"@writers"}, ""},
		{"negation", "!x.md @a", "", nil, "negated patterns"},
		{"too many lines", strings.Repeat("\n", MaxCodeownersLines+1), "", nil, "more than 20000 lines"},
		{"too large", strings.Repeat("#", MaxCodeownersSize+1), "", nil, "larger than 3 MiB"},
		{"a long pattern", strings.Repeat("a", 1025) + " @a", "", nil, "longer than 1024 bytes"},
		{"a deep pattern", strings.Repeat("a/", 40) + "b @a", "", nil, "more than 32 parts"},
		{"many owners", "* " + strings.Repeat("@a ", 65), "", nil, "more than 64 owners"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseCodeowners([]byte(tc.file))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Owners(tc.path); !cmp.Equal(got, tc.want) {
				t.Errorf("Owners(%q): got %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

func TestOwnerKinds(t *testing.T) {
	t.Parallel()
	users, teams, other := OwnerKinds([]string{"@alice", "@acme/web", "bob@example.com", "@@developer", "@acme/web/sub"})
	if !cmp.Equal(users, []string{"alice"}) || !cmp.Equal(teams, []string{"acme/web", "acme/web/sub"}) || !cmp.Equal(other, []string{"bob@example.com", "@@developer"}) {
		t.Errorf("got %q %q %q", users, teams, other)
	}
}

// FuzzCodeowners: no file makes the parser or the matching panic or run
// long (the pattern bounds), and a path matched by no rule has no owner.
func FuzzCodeowners(f *testing.F) {
	f.Add(githubExample, "docs/x.md")
	f.Add("[Docs] @w\n**/a/**/b/**/c*d*e*f @x\n", "a/b/c/dxexf")
	f.Add("/ @root\n\\#x @y\n", "#x")
	f.Fuzz(func(t *testing.T, file, path string) {
		c, err := ParseCodeowners([]byte(file))
		if err != nil {
			return
		}
		owners := c.Owners(path)
		if len(owners) > 0 && strings.TrimSpace(file) == "" {
			t.Errorf("an empty file owns %q: %q", path, owners)
		}
	})
}

func ExampleCodeowners_Owners() {
	c, err := ParseCodeowners([]byte("* @acme/platform\n/docs/ @alice\n*.md\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range []string{"src/main.go", "docs/guide.txt", "docs/README.md"} {
		fmt.Printf("%s: %q\n", f, c.Owners(f))
	}
	// Output:
	// src/main.go: ["@acme/platform"]
	// docs/guide.txt: ["@alice"]
	// docs/README.md: []
}
