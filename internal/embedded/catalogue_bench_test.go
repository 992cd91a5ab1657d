package embedded_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/embedded"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// BenchmarkCatalogue runs the whole catalogue against the embedded reference on the
// memory store, as `idemproof check` does. Besides the wall time per run it reports:
//
//   - attempts/op: requests the proxy journal saw (the burst of 1,000 included);
//
//   - runner-overhead-%: the share of scenario time spent outside the span from the
//     first attempt's invoke to the last attempt's answer — fault installation, ledger
//     probes, journal reads. Declared waits inside that span (retention, lock timeout,
//     held responses) count as the scenario's own time, not overhead.
//
// It runs twice: with the shipped reference profile (a 3 s retention) and with the same
// profile narrowed to a 1 s window, the size the catalogue's time goal is stated for.
//
//	go test -run '^$' -bench Catalogue -benchtime 3x ./internal/embedded/
func BenchmarkCatalogue(b *testing.B) {
	for _, window := range []time.Duration{0, time.Second} {
		name := "window=shipped"
		if window > 0 {
			name = "window=" + window.String()
		}
		b.Run(name, func(b *testing.B) { benchCatalogue(b, window) })
	}
}

func benchCatalogue(b *testing.B, window time.Duration) {
	prof, err := profile.Builtin("reference")
	if err != nil {
		b.Fatal(err)
	}
	if window > 0 {
		prof.Retention = profile.Duration(window)
	}
	tgt, err := embedded.Start(context.Background(), embedded.Config{Profile: prof})
	if err != nil {
		b.Fatal(err)
	}
	defer tgt.Close()
	var attempts int
	var total, outside time.Duration
	for b.Loop() {
		rep, err := scenarios.Run(context.Background(), scenarios.RunConfig{Profiles: []*profile.Profile{tgt.Profile}})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Verdict == verdict.Fail || r.Verdict == verdict.Unknown {
				b.Errorf("%s %s: %s", r.Verdict, r.ScenarioID, r.Message)
			}
			d := time.Duration(r.DurationMS * float64(time.Millisecond))
			if r.Duration > 0 {
				d = r.Duration
			}
			total += d
			if rec := r.Evidence.Record; rec != nil {
				attempts += len(rec.Journal)
				outside += max(0, d-attemptSpan(rec))
			} else {
				outside += d
			}
		}
	}
	b.ReportMetric(float64(attempts)/float64(b.N), "attempts/op")
	if total > 0 {
		b.ReportMetric(100*float64(outside)/float64(total), "runner-overhead-%")
	}
}

// attemptSpan is the time from the first invoke to the last answer in the history.
func attemptSpan(rec *verdict.Record) time.Duration {
	var first, last time.Time
	for _, op := range rec.History {
		if op.Time.IsZero() {
			continue
		}
		if first.IsZero() || op.Time.Before(first) {
			first = op.Time
		}
		if op.Time.After(last) {
			last = op.Time
		}
	}
	return last.Sub(first)
}
