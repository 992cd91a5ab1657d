package scenarios

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// LateLedgerDelay is how long after a scenario's end its ledger is read again, at the
// earliest (the whole target's catalogue usually takes longer than that).
const LateLedgerDelay = time.Second

// judgeLate reads each judged scenario's ledgers again once every scenario of the target
// has ended, and judges the record again with those counts: a side effect that appeared
// after every answer had been given (a replay that queued the work again, a duplicate
// applied by a background job) shows only there. The checker decides what the later
// counts mean, exactly as it did the first time, so an attempt that was still unseen may
// commit late where the checker allows it; only a judgment that becomes FAIL is kept,
// and the result then says both counts. The other way round, a FAIL for effects missing
// from the ledger alone (lost: a success with no side effect) is judged again too: a
// ledger that lags behind the writes (a read replica, a search index, work committed
// after its answer) shows them by then, and the judgment on the complete count is the
// one kept. Entity ledgers only: a global ledger counts the other scenarios' effects too
// by then.
func judgeLate(ctx context.Context, t *target, list []Scenario, all []verdict.Result, ran []bool, lastEnd time.Time, notice func(string)) {
	if t.p.SideEffects.Global() {
		return
	}
	again := lateReads(t.p, all, ran)
	if len(again) == 0 {
		return // nothing judged from a ledger (N/A, UNKNOWN, FAIL on a duplicate): no wait
	}
	if wait := time.Until(lastEnd.Add(LateLedgerDelay)); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
	}
	for _, i := range again {
		sc, res := list[i], &all[i]
		rec := res.Evidence.Record
		lagging := awaitsLateLedger(t.p, *res)
		if ctx.Err() != nil {
			return
		}
		late, ok := t.readLateLedger(ctx, rec)
		if !ok || maps.Equal(late, rec.Ledger) {
			continue
		}
		relabelled := *rec
		relabelled.Ledger = late
		v, msg, ev := judge(sc, relabelled, t.p)
		v, msg = withPremise(sc, relabelled, t.p, v, msg, ev)
		recCopy := *rec
		recCopy.LateLedger = late
		ev.Record = &recCopy
		if lagging {
			if v == verdict.Fail && onlyLost(ev) {
				continue // still only missing effects: the first judgment's words stand
			}
			if v == verdict.Fail {
				// The later counts show another violation (a duplicate where effects
				// seemed missing): say that one.
				res.Evidence = ev
				res.Message = fmt.Sprintf("%s — read again at the end of the run: %s, %s when the scenario was judged",
					msg, ledgerCounts(late), ledgerCounts(rec.Ledger))
				continue
			}
			res.Verdict, res.Evidence = v, ev
			res.Message = fmt.Sprintf("%s — the ledger had caught up when read again at the end of the run: %s, %s when the scenario was judged (effects that appeared only after their answers)",
				msg, ledgerCounts(late), ledgerCounts(rec.Ledger))
			if notice != nil {
				notice(fmt.Sprintf("%s @ %s is %s after all: %s", sc.ID, t.p.Name, v, res.Message))
			}
			continue
		}
		if v != verdict.Fail {
			continue
		}
		res.Verdict, res.Evidence = verdict.Fail, ev
		res.Message = fmt.Sprintf("%s — read again at the end of the run: %s, %s when the scenario was judged (an effect that appeared after every answer)",
			msg, ledgerCounts(late), ledgerCounts(rec.Ledger))
		if notice != nil {
			notice(fmt.Sprintf("%s @ %s is FAIL after all: %s", sc.ID, t.p.Name, res.Message))
		}
	}
}

// lateReads is the index of every result whose ledger judgeLate reads again: a result
// judged from a ledger that read without error, unless it is a FAIL that does not rest
// on missing effects alone (a later count cannot undo a duplicate).
func lateReads(p *profile.Profile, all []verdict.Result, ran []bool) []int {
	var out []int
	for i, res := range all {
		rec := res.Evidence.Record
		if !ran[i] || rec == nil || rec.LedgerErr != "" || len(rec.Ledger) == 0 || (res.Verdict == verdict.Fail && !awaitsLateLedger(p, res)) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// awaitsLateLedger reports whether judgeLate will judge a FAIL again: it rests only on
// effects missing from a per-entity ledger the scenario could read.
func awaitsLateLedger(p *profile.Profile, res verdict.Result) bool {
	rec := res.Evidence.Record
	return res.Verdict == verdict.Fail && !p.SideEffects.Global() && rec != nil && rec.LedgerErr == "" &&
		len(rec.Ledger) > 0 && onlyLost(res.Evidence)
}

// readLateLedger reads the ledgers the record has counts of, for its entity (and the
// operation's for its side entities too).
func (t *target) readLateLedger(ctx context.Context, rec *verdict.Record) (map[string]int, bool) {
	late := map[string]int{}
	for name := range rec.Ledger {
		var n int
		var err error
		switch name {
		case verdict.LedgerOther:
			if t.p.Other == nil || t.p.Other.SideEffects.Global() {
				return nil, false
			}
			n, err = t.readLedger(ctx, t.p.Other.SideEffects, rec.Entity)
		case verdict.LedgerOtherEntity:
			n, err = t.readLedger(ctx, t.p.SideEffects, rec.OtherEntity)
		default:
			n, err = t.readOperationLedger(ctx, rec)
		}
		if err != nil {
			return nil, false
		}
		late[name] = n
	}
	return late, true
}

// ledgerCounts is "2 side effects" or "operation 2, other_operation 1".
func ledgerCounts(l map[string]int) string {
	if len(l) == 1 {
		if n, ok := l[verdict.LedgerOperation]; ok {
			return fmt.Sprintf("%d side effect(s)", n)
		}
	}
	parts := []string{fmt.Sprintf("%s %d", verdict.LedgerOperation, l[verdict.LedgerOperation])}
	for _, name := range []string{verdict.LedgerOther, verdict.LedgerOtherEntity} {
		if n, ok := l[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	return strings.Join(parts, ", ")
}

// onlyLost reports whether a FAIL's evidence counts nothing but effects missing from the
// ledger: successes it did not show (yet), as lost or as fabricated (a success with no
// side effect at all).
func onlyLost(ev verdict.Evidence) bool {
	if ev.Categories[verdict.CatLost]+ev.Categories[verdict.CatFabricated] == 0 {
		return false
	}
	for c, n := range ev.Categories {
		if c != verdict.CatLost && c != verdict.CatFabricated && n > 0 {
			return false
		}
	}
	return true
}
