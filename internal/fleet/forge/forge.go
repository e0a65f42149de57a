package forge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
func ParseRemote(remote string) (Repo, error) {
	var host, path, scheme string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		switch u.Scheme {
		case "https", "http":
			scheme, host = u.Scheme, u.Host
		case "ssh", "git":
			scheme, host = "https", u.Hostname()
		default:
			return Repo{}, fmt.Errorf("%s: a forge's repository is an https or ssh address", u.Scheme+"://"+u.Host)
		}
		path = u.Path
	} else if strings.Contains(remote, "://") {
		return Repo{}, errors.New("a forge's repository is an https or ssh address")
	} else if i := strings.Index(remote, ":"); i > 0 && !strings.ContainsAny(remote[:i], `/\`) {
		host, path, scheme = remote[:i], remote[i+1:], "https"
		if j := strings.LastIndex(host, "@"); j >= 0 {
			host = host[j+1:]
		}
	} else {
		return Repo{}, errors.New("a local repository has no forge")
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 2 {
		return Repo{}, fmt.Errorf("%s: the address names no owner/repository", host)
	}
	owner, name := parts[len(parts)-2], strings.TrimSuffix(parts[len(parts)-1], ".git")
	for _, p := range []string{owner, name} {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "?#%\\ \t\n") {
			return Repo{}, fmt.Errorf("%s: %q is not an owner or repository name", host, p)
		}
	}
	base := scheme + "://" + host
	if prefix := strings.Join(parts[:len(parts)-2], "/"); prefix != "" {
		base += "/" + prefix
	}
	return Repo{Base: base, Owner: owner, Name: name}, nil
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
