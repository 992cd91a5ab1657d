package clientcheck_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
)

// BenchmarkCheck measures the pure checks over a large run: 1,000 operations of three
// attempts each (lost, 503, then 201).
func BenchmarkCheck(b *testing.B) {
	o := clientcheck.Observation{Entities: map[string]string{}, Ledger: map[string]int{}, OutcomesWritten: true}
	for i := 0; i < 1000; i++ {
		op, body, key := fmt.Sprintf("order-%d", i), fmt.Sprintf("body-%d", i), fmt.Sprintf("key-%d", i)
		at := time.Duration(i) * time.Millisecond
		o.Attempts = append(o.Attempts,
			lost(attempt(uint64(3*i+1), key, body, 0, at)),
			attempt(uint64(3*i+2), key, body, 503, at+time.Microsecond),
			attempt(uint64(3*i+3), key, body, 201, at+2*time.Microsecond))
		o.Entities[body], o.Ledger[op] = op, 1
		o.Outcomes = append(o.Outcomes, clientcheck.Outcome{Operation: op, Outcome: clientcheck.OutcomeOK})
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := clientcheck.Findings(clientcheck.Check(o), false); len(got) != 0 {
			b.Fatalf("findings: %v", got)
		}
	}
}

// BenchmarkRunNoFaults measures the harness's own cost per run: reference server, proxy,
// one operation through them, journal, ledger and checks.
func BenchmarkRunNoFaults(b *testing.B) {
	client := refundLoop(1, func(order, _ int) string { return fmt.Sprintf("bench-%d", order) })
	for b.Loop() {
		res, err := clientcheck.Run(context.Background(), clientcheck.Config{Faults: []faultproxy.Rule{}}, client)
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Err(); err != nil {
			b.Fatal(err)
		}
	}
}
