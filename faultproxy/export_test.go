package faultproxy

// FastServed is how many attempts p's fast path forwarded itself, and HandedOff how many
// connections it moved to net/http: the tests check which path served what.
func FastServed(p *Proxy) uint64 { return p.fastServed.Load() }
func HandedOff(p *Proxy) uint64  { return p.handedOff.Load() }
