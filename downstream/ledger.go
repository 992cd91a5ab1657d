package downstream

// Ledger is the downstream ledger of one logical operation: what the target sent its
// vendor and what the vendor did.
type Ledger struct {
	Calls   int `json:"calls"`
	Effects int `json:"effects"` // new effects the vendor committed (a keyed replay is none)
	Unkeyed int `json:"unkeyed"` // calls that carried no key
	// PerKey counts the calls of each downstream key ("" = unkeyed calls).
	PerKey map[string]int `json:"per_key,omitempty"`
}

// Keys is the number of distinct non-empty downstream keys.
func (l Ledger) Keys() int {
	n := 0
	for k := range l.PerKey {
		if k != "" {
			n++
		}
	}
	return n
}

// LedgerOf sums calls up.
func LedgerOf(calls []Call) Ledger {
	l := Ledger{PerKey: map[string]int{}}
	for _, c := range calls {
		l.Calls++
		if c.NewEffect() {
			l.Effects++
		}
		if !c.HasKey || c.Key == "" {
			l.Unkeyed++
			l.PerKey[""]++
			continue
		}
		l.PerKey[c.Key]++
	}
	return l
}
