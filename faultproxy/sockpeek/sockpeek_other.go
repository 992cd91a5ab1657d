//go:build !linux

package sockpeek

import "net"

// Supported says whether this platform can peek.
const Supported = false

// Gone is never true where a connection cannot be peeked at.
func Gone(net.Conn) bool { return false }
