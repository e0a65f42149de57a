package forge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/redact"
)

// Repo is a repository on a forge: the forge's API base URL and the
// repository's owner and name.
type Repo struct {
	// Base is the forge's web address ("https://gitea.example.com", or
	// with the path a sub-path installation lives under).
	Base  string
	Owner string
	Name  string
}

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRemote returns the repository a git remote names: an https, http
// or ssh URL, or an scp-like address (git@host:owner/name.git). The base
// is the scheme and host of an http(s) URL with the path before
// owner/name (a forge under a sub-path), and https://host for ssh. The
// owner and name are the last two parts of the path, without ".git".
// That is how Gitea, Forgejo and GitHub name repositories; GitLab's
// projects live in nested groups ([RepoOf]).
func ParseRemote(remote string) (Repo, error) {
	site, parts, err := splitRemote(remote)
	if err != nil {
		return Repo{}, err
	}
	base := site
	if prefix := strings.Join(parts[:len(parts)-2], "/"); prefix != "" {
		base += "/" + prefix
	}
	return Repo{Base: base, Owner: parts[len(parts)-2], Name: parts[len(parts)-1]}, nil
}

// RepoOf returns the repository a git remote names on a forge of kind (a
// Kind constant), whose web address is base ("": taken from the remote).
// For Gitea, Forgejo and GitHub it is [ParseRemote]'s, with base in place
// of the remote's. GitLab's projects live in nested groups
// (group/subgroup/project): the owner is the whole namespace
// ("group/subgroup"), so that the repository's String is the project's
// full path, and the base is the scheme and host; a GitLab under a
// sub-path is given as base, whose path is then taken off the remote's.
func RepoOf(kind, remote, base string) (Repo, error) {
	base = strings.TrimRight(base, "/")
	if kind != KindGitLab {
		r, err := ParseRemote(remote)
		if err == nil && base != "" {
			r.Base = base
		}
		return r, err
	}
	site, parts, err := splitRemote(remote)
	if err != nil {
		return Repo{}, err
	}
	// The web address, not the API's: the client adds /api/v4.
	base = strings.TrimRight(strings.TrimSuffix(base, "/api/v4"), "/")
	if base != "" {
		if u, err := url.Parse(base); err == nil && strings.EqualFold(u.Scheme+"://"+u.Host, site) {
			prefix := strings.Split(strings.Trim(u.Path, "/"), "/")
			if len(prefix) > 0 && prefix[0] != "" && len(parts) > len(prefix)+1 && slices.Equal(parts[:len(prefix)], prefix) {
				parts = parts[len(prefix):]
			}
		}
		site = base
	}
	return Repo{Base: site, Owner: strings.Join(parts[:len(parts)-1], "/"), Name: parts[len(parts)-1]}, nil
}

// splitRemote splits a remote into its site (scheme and host: https for
// ssh) and the parts of its path, the last without ".git"; there are at
// least two, each a name (not empty, ".", "..", nor with a character
// that does not belong in one).
func splitRemote(remote string) (site string, parts []string, err error) {
	var host, path, scheme string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		switch u.Scheme {
		case "https", "http":
			scheme, host = u.Scheme, u.Host
		case "ssh", "git":
			scheme, host = "https", u.Hostname()
		default:
			return "", nil, fmt.Errorf("%s: a forge's repository is an https or ssh address", u.Scheme+"://"+u.Host)
		}
		path = u.Path
	} else if strings.Contains(remote, "://") {
		return "", nil, errors.New("a forge's repository is an https or ssh address")
	} else if i := strings.Index(remote, ":"); i > 0 && !strings.ContainsAny(remote[:i], `/\`) {
		host, path, scheme = remote[:i], remote[i+1:], "https"
		if j := strings.LastIndex(host, "@"); j >= 0 {
			host = host[j+1:]
		}
	} else {
		return "", nil, errors.New("a local repository has no forge")
	}
	parts = strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 2 {
		return "", nil, fmt.Errorf("%s: the address names no owner/repository", host)
	}
	parts[len(parts)-1] = strings.TrimSuffix(parts[len(parts)-1], ".git")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "?#%\\ \t\n") {
			return "", nil, fmt.Errorf("%s: %q is not an owner or repository name", host, p)
		}
	}
	return scheme + "://" + host, parts, nil
}

// wrapError names the forge, the call and the repository, and keeps the
// token out of the error's text (on one line); a [*RateLimitError] stays
// one ([errors.As]) and needs no forge name. nil stays nil.
func wrapError(forgeName, token string, r Repo, what string, err error) error {
	if err == nil {
		return nil
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("%s %s: %w", what, r, rl)
	}
	msg := redact.Text(strings.ReplaceAll(err.Error(), "\n", " "), []string{token})
	return fmt.Errorf("%s %s %s: %s", forgeName, what, r, msg)
}

// ErrNoAutoMerge is returned (wrapped) by [Client.AutoMerge] when the
// forge cannot merge the request by itself once its checks pass (GitLab:
// no pipeline for its head commit yet, so GitLab would merge it at once;
// GitHub: the repository has auto-merge turned off, its base branch has
// no protection rule to wait for, or the request is already mergeable);
// the request is left open and the rollout merges it itself when it sees
// it green.
var ErrNoAutoMerge = errors.New("the forge cannot merge this request when its checks pass")

// draftMarkers are the title prefixes that mark a request as a draft:
// Gitea's and Forgejo's "WIP: ", GitLab's "Draft: " (GitLab also reads
// "[Draft]" and "(Draft)", in any case).
var draftMarkers = []string{"WIP:", "Draft:", "[Draft]", "(Draft)"}

// Undraft returns a request's title without its draft marker ("Draft: x"
// → "x").
func Undraft(title string) string {
	for _, m := range draftMarkers {
		if len(title) >= len(m) && strings.EqualFold(title[:len(m)], m) {
			return strings.TrimLeft(title[len(m):], " ")
		}
	}
	return title
}

// State is the state of a request.
type State string

// The states of a request.
const (
	StateOpen   State = "open"
	StateClosed State = "closed"
	StateMerged State = "merged"
)

// CI is the combined result of a commit's checks.
type CI string

// The results of a commit's checks.
const (
	// CINone: the commit has no check at all.
	CINone    CI = ""
	CIPending CI = "pending"
	CISuccess CI = "success"
	CIFailure CI = "failure"
)

// PR is a pull or merge request.
type PR struct {
	Number int64
	// NodeID is the request's global id in the forge's GraphQL API
	// (GitHub's node_id); "" where the forge has none.
	NodeID  string
	URL     string
	State   State
	Title   string
	Body    string
	Head    string // the branch
	HeadSHA string
	Draft   bool
	// Mergeable is false when the forge found the request conflicts with
	// its base.
	Mergeable bool
}

// Open is a request to open.
type Open struct {
	Base, Head  string
	Title, Body string
	Labels      []string
	Reviewers   []string
	Draft       bool
}

// Client is a forge's API, as a rollout uses it. Every method is safe for
// concurrent use; errors never hold the token.
type Client interface {
	// Name is the forge's name ("gitea").
	Name() string
	// FindOpen returns the open request from branch head into the
	// repository's default branch, nil when there is none.
	FindOpen(ctx context.Context, r Repo, base, head string) (*PR, error)
	// Open opens a request.
	Open(ctx context.Context, r Repo, o Open) (*PR, error)
	// Edit sets the title and body of request n.
	Edit(ctx context.Context, r Repo, n int64, title, body string) error
	// Close comments on request n and closes it.
	Close(ctx context.Context, r Repo, n int64, comment string) error
	// Get returns request n.
	Get(ctx context.Context, r Repo, n int64) (*PR, error)
	// CI returns the combined result of the checks of commit sha.
	CI(ctx context.Context, r Repo, sha string) (CI, error)
	// Merge merges request pr at its head commit.
	Merge(ctx context.Context, r Repo, pr *PR) error
	// AutoMerge asks the forge to merge pr once its checks pass.
	AutoMerge(ctx context.Context, r Repo, pr *PR) error
	// Ready marks the draft request pr ready for review.
	Ready(ctx context.Context, r Repo, pr *PR) error
}

// The forges whose API jig speaks ([New]).
const (
	KindGitea  = "gitea" // Gitea and Forgejo
	KindGitHub = "github"
	KindGitLab = "gitlab"
)

// New returns the API client of the forge kind (a Kind constant), which
// sends token and paces its requests with budget (nil: unpaced).
func New(kind, token string, budget *Budget) (Client, error) {
	switch kind {
	case KindGitea:
		return NewGitea(token, budget), nil
	case KindGitHub:
		return NewGitHub(token, budget), nil
	case KindGitLab:
		return NewGitLab(token, budget), nil
	}
	return nil, fmt.Errorf("jig does not speak the API of the forge %q", kind)
}

// KindOf returns the forge kind a host name suggests ("github.com",
// "gitlab.example.com", "codeberg.org"), "" when it suggests none.
func KindOf(host string) string {
	h := strings.ToLower(host)
	switch {
	case h == "github.com" || strings.HasSuffix(h, ".github.com") || strings.HasPrefix(h, "github."):
		return KindGitHub
	case strings.Contains(h, "gitlab"):
		return KindGitLab
	case strings.Contains(h, "gitea"), strings.Contains(h, "forgejo"), strings.Contains(h, "codeberg"):
		return KindGitea
	}
	return ""
}
