package stdio

import "syscall"

// parentDeathSignal kills the server when the process that started it dies without
// stopping it (a shim the agent host killed): no server outlives its layer.
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
