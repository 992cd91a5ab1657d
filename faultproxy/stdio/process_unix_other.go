//go:build unix && !linux

package stdio

import "syscall"

func parentDeathSignal(*syscall.SysProcAttr) {}
