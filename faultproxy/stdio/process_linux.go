package stdio

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// parentDeathSignal kills the server when the process that started it dies without
// stopping it (a shim the agent host killed): no server outlives its layer.
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// awaitExit returns once the process has exited, without reaping it: while it is a
// zombie its pid, which names its process group, cannot go to another process, so the
// group can still be killed safely.
func awaitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}
