//go:build !linux

package faultproxy

import (
	"context"
	"net"
)

// Elsewhere every upstream call goes through http.Transport.
const peekSupported = false

func connIdleAlive(net.Conn) bool { return false }

func peerGone(net.Conn) bool { return false }

func watchPeer(parent context.Context, _ net.Conn) (context.Context, func()) {
	return context.WithCancel(parent)
}
