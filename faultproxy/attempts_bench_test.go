package faultproxy

import (
	"strconv"
	"testing"
)

// BenchmarkNextAttemptNewKeys is the attempt counter's cost for keys it has not seen (the
// common case: most attempts are first attempts), at the default byte budget, including
// the generations' turnover. Building each key (strconv) is part of every iteration.
func BenchmarkNextAttemptNewKeys(b *testing.B) {
	j := newJournal(DefaultJournalCapacity, DefaultJournalBytes, DefaultAttemptKeyBytes)
	e := j.current()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if n := j.nextAttempt(e, "bench-key-0123456789abcdef-"+strconv.Itoa(i)); n != 1 {
			b.Fatalf("a new key's attempt is %d", n)
		}
	}
}
