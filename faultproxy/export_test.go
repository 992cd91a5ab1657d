package faultproxy

// FastServed is how many attempts p's fast path forwarded itself, and HandedOff how many
// connections it moved to net/http: the tests check which path served what.
func FastServed(p *Proxy) uint64 { return p.fastServed.Load() }
func HandedOff(p *Proxy) uint64  { return p.handedOff.Load() }

// ReadKeyField is what the proxy reads of the key field at field in a buffered request
// body: the key, whether there was one, and the refusal (empty: none).
func ReadKeyField(body []byte, field string) (string, bool, string) {
	k := readBodyKey(body, checkJSON(body), SplitKeyField(field))
	return k.key, k.ok, k.refuse
}
