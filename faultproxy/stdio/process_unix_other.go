//go:build unix && !linux

package stdio

import "syscall"

func parentDeathSignal(*syscall.SysProcAttr) {}

// awaitExit: without waitid's WNOWAIT the group is killed after the reap (Process.wait).
func awaitExit(int) {}
