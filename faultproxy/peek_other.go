//go:build !linux

package faultproxy

import "net"

// Elsewhere every upstream call goes through http.Transport.
const peekSupported = false

func connIdleAlive(net.Conn) bool { return false }
