//go:build unix

package stdio

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes the server the leader of a process group of its own, so the
// whole group can be signalled.
func ownProcessGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(c.SysProcAttr)
}

func killGroup(c *exec.Cmd) { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }

func termGroup(c *exec.Cmd) { _ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
