//go:build !unix

package stdio

import "os/exec"

// Without process groups only the server itself is signalled.
func ownProcessGroup(*exec.Cmd) {}

func killGroup(c *exec.Cmd) { _ = c.Process.Kill() }

func termGroup(c *exec.Cmd) { _ = c.Process.Kill() }

func awaitExit(int) {}
