// Package cli is the jig command line: a kong command tree ([CLI]) run by
// [Main], shared plumbing for every command ([App]: streams, the [Output]
// helper, the rc-file configuration and registry clients, the
// interactivity decision and a [Prompter]), and the mapping of errors to
// messages and exit codes (0 ok, 1 error, 3 drift found by jig check, 130
// aborted; see [Main]).
//
// Each command is a struct (which file holds it: see [CLI]) with a Run method that turns
// flags into one library call and prints the result. Interactivity is
// decided once: prompts are shown only when --ci is not given, CI is unset,
// and stdin and stdout are terminals; otherwise [NoPrompt] fails at once and
// the command names the flag that supplies the value.
package cli
