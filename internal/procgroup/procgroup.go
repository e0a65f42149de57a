// Package procgroup runs a command with everything it starts as one
// group, so that cancelling the command's context ends them all.
//
// A shell command ("sh -c 'npm test'") starts children that hold its
// output pipe. When only the shell is killed, they run on (orphans, after
// jig has exited) and the read of the output waits for them. [Set] puts
// the command in a process group of its own and makes the context's
// cancellation kill the whole group.
package procgroup

import (
	"os/exec"
	"time"
)

// WaitDelay is how long, after the group was killed, the wait for the
// command's output may take before the pipes are closed anyway (a child
// that left the group still holds them).
const WaitDelay = time.Second

// Set makes cmd, made with [exec.CommandContext] and not yet started, run
// in a process group of its own that the context's cancellation kills as
// a whole (where the system has process groups; elsewhere only the
// command is killed).
func Set(cmd *exec.Cmd) {
	setGroup(cmd)
	cmd.WaitDelay = WaitDelay
}

// SetInterrupt is [Set] for a program that cleans up when interrupted
// (git removes its lock files): the context's cancellation sends the
// group SIGINT instead of SIGKILL, and the command itself is killed when
// it has not ended [WaitDelay] later. Where the system has no process
// groups, only the command is killed.
func SetInterrupt(cmd *exec.Cmd) {
	setInterruptGroup(cmd)
	cmd.WaitDelay = WaitDelay
}
