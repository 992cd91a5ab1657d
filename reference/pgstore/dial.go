package pgstore

import (
	"net"
	"time"
)

// deadPeerTimeout is how long a connection to the database may leave sent bytes
// unacknowledged before the kernel gives it up (TCP_USER_TIMEOUT, where the system has
// it), and how long a dial may take when the DSN sets no connect_timeout. Without it a
// pooled connection whose network path went away (a cut link, a container pulled off
// its network) swallows the next statement until TCP's own retries end, some fifteen
// minutes later, and the request waiting on it never gets its 503. A database that is
// merely busy still acknowledges at once, so no wait for a lock or a slow statement is
// cut short.
const deadPeerTimeout = 10 * time.Second

// dialer dials the database with deadPeerTimeout set on TCP connections.
func dialer(connectTimeout time.Duration) *net.Dialer {
	if connectTimeout <= 0 {
		connectTimeout = deadPeerTimeout
	}
	return &net.Dialer{Timeout: connectTimeout, KeepAlive: 5 * time.Minute, Control: setDeadPeerTimeout}
}
