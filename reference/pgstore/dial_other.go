//go:build !linux

package pgstore

import "syscall"

// setDeadPeerTimeout does nothing where TCP_USER_TIMEOUT is not available: a dead
// network path then ends with TCP's own retries, and dials still with their timeout.
func setDeadPeerTimeout(string, string, syscall.RawConn) error { return nil }
