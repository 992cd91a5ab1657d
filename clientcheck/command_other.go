//go:build !unix

package clientcheck

import "os/exec"

// killProcessGroupOnCancel: without process groups only the command itself is killed.
func killProcessGroupOnCancel(*exec.Cmd) {}
