//go:build !unix

package procgroup

import "os/exec"

func setGroup(*exec.Cmd) {}

func setInterruptGroup(*exec.Cmd) {}
