//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		// The group's id is the command's process id (Setpgid).
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func setInterruptGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		// SIGCONT too: a member stopped (it read the terminal from the
		// background group) acts on the interrupt only once continued.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		return err
	}
}
