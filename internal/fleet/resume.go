package fleet

import "context"

// inFlight reports whether a recorded result is a step an earlier run
// began and did not see through: the push of the branch (the remote may
// have it) or the opening of the request after it.
func (r Result) inFlight() bool {
	return r.Status == StatusFailed && (r.Step == "push" || r.Step == "pr")
}

// pending records, before a step that changes the remote begins, that
// res is at that step: the record stands should the run stop (interrupted,
// killed, the machine down) before the outcome replaces it, and the rerun
// finishes the step ([runner.finish]). A dry run records nothing.
func (r *runner) pending(res Result, step, why string) error {
	if r.state == nil {
		return nil
	}
	res.Status, res.Step, res.Error = StatusFailed, step, why
	return r.state.record(res)
}

// finish completes a repository whose branch an earlier run pushed (the
// remote has it with the same tree) but whose outcome it never recorded:
// it opens the request, except where the push itself asked for it
// (GitLab's push options) or none is wanted.
func (r *runner) finish(ctx context.Context, g *gitRunner, forge Forge, note, title, body string, draft bool, res Result) Result {
	res.Note = note
	switch forge {
	case ForgeNone:
		if res.Note == "" {
			res.Note = "the branch was pushed by an earlier run that stopped"
		}
	case ForgeGitLab:
		// GitLab opens the merge request when the push carrying the
		// options updates the branch, which the earlier run's did.
		res.Forge = ForgeGitLab
		res.Note = "the branch was pushed, with its merge request options, by an earlier run that stopped"
	default:
		if err := r.push(ctx, g, forge, res.Base, title, body, draft, true, &res); err != nil {
			return res
		}
	}
	res.Status = pushed(draft)
	return res
}
