// Package scratch gives each server process a private share of one local
// folder for its temporary files (uploads being received), and removes the
// shares of processes that died, so a kill -9 leaves nothing behind for
// long.
//
// A process is an owner with a random id. Before it creates its first file
// it holds an exclusive flock(2) on <dir>/<id>.lock for as long as it
// lives; its files are named <id>-<random><suffix>. The kernel drops the
// lock when the process dies, however it dies, so any process sharing the
// folder (another replica on the same host, or the restarted server) can
// tell a live owner from a dead one by trying the lock: [Dir.Owner] answers
// that question and [Dir.Sweep] removes the files of dead owners, leaving a
// <id>.dead marker behind for a while so that [Dir.Owner] still answers
// [Dead] for them (the publisher uses it to take over a claim at once).
//
// The lock file is created under a temporary name, locked and only then
// renamed into place, so <id>.lock never exists unlocked while its owner
// lives. Files whose names do not follow the pattern are never touched, so
// the folder may be shared with other programs, although a folder of its
// own is better. Without flock(2) (non-Unix systems) owners are never known
// to be dead and Sweep removes only files older than a day.
package scratch
