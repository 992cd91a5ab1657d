// Package sockpeek looks at a TCP connection's next byte without consuming it and
// without blocking (recvfrom with MSG_PEEK|MSG_DONTWAIT), to learn whether the peer has
// closed or reset it while nobody reads. The standard library has no such call: a Read
// consumes, and a Read with a deadline blocks for as long as the deadline.
//
// It is Linux only; elsewhere Supported is false and the peer is never reported gone.
//
// A public leaf of faultproxy: the proxy uses it to notice a client that left, and the
// downstream sink (package downstream) to notice a target that hung up on its vendor
// call. It imports nothing of ours, as faultproxy itself does not.
package sockpeek
