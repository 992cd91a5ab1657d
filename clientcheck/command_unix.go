//go:build unix

package clientcheck

import (
	"os/exec"
	"syscall"
)

// killProcessGroupOnCancel puts the command in its own process group and kills the whole
// group at the timeout: a shell script's curl must not outlive it.
func killProcessGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
