// Package forge talks to a forge's API for a rollout (jig fleet update):
// find, open, update and close the pull request of a branch, read the
// result of its checks, merge it or mark it ready. [Client] is what a
// rollout needs; [Gitea] implements it for Gitea and Forgejo, [GitHub]
// for GitHub and GitHub Enterprise Server, [GitLab] for GitLab.com and
// self-hosted GitLab ([New] picks by kind). [RepoOf] names a remote's
// repository the way its forge does (GitLab: the full path of a project
// in nested groups).
//
// Every request goes through a [Budget]: requests that change the forge
// are spread evenly under a budget per hour and kept inside a daily
// [Window], and every request waits while the forge has asked for a pause
// (Retry-After, X-RateLimit-Remaining: 0 or GitLab's RateLimit-Remaining:
// 0, GitHub's secondary limit), then is sent again rather than failing
// the repository. The budget takes
// a [Clock], so tests run hours of pacing without sleeping.
//
//	budget := forge.NewBudget(60, nil, nil)
//	client := forge.NewGitea(os.Getenv("GITEA_TOKEN"), budget)
//	repo, _ := forge.ParseRemote("https://gitea.example.com/acme/api.git")
//	pr, err := client.FindOpen(ctx, repo, "main", "jig/acme-ci-node")
//
// Tokens never appear in an error.
package forge
