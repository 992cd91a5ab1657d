package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

func otherEntityRecord(typ verdict.OpType, status int, body string, first, other int) verdict.Record {
	rec := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(2, "other", typ, status, body, nil).
		at(4, scenarios.ControlStep, verdict.OpOK, 201, committed, nil).record(first)
	rec.Ledger[verdict.LedgerOtherEntity] = other
	return rec
}

func TestOtherEntityVerdicts(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // the entity is in the body (order_id), not the path
	judge := checker(t, "scope/other-entity")

	v, msg, _ := judge(otherEntityRecord(verdict.OpFail, 422, `{"title":"reused"}`, 1, 0), p)
	require.Equal(t, verdict.Pass, v, msg)

	// The first order's refund for the second: nothing happened for it.
	v, msg, ev := judge(otherEntityRecord(verdict.OpOK, 201, committed, 1, 0), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "got the first entity's response")
	require.Equal(t, 1, ev.Categories[verdict.CatLeaked])

	// Executed for the other order: another payload under the key (the entity is in the
	// body), as fingerprint/mismatch judges it.
	v, msg, _ = judge(otherEntityRecord(verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, 1, 1), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "another payload (the other entity in the body) executed under the same key")

	// With the entity in the path, that is another endpoint: its own execution passes.
	inPath := refProfile(t)
	inPath.Operation.Path = "/v1/orders/{{.Entity}}/refunds"
	v, msg, _ = judge(otherEntityRecord(verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, 1, 1), inPath)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, _ = judge(otherEntityRecord(verdict.OpOK, 201, committed, 1, 0), inPath)
	require.Equal(t, verdict.Fail, v, msg, "a leak is a leak wherever the entity is")

	// The first entity executed again.
	v, msg, _ = judge(otherEntityRecord(verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, 2, 0), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "executed again for the first one")

	v, msg, _ = judge(otherEntityRecord(verdict.OpInfo, 0, "", 1, 0), p)
	require.Equal(t, verdict.Unknown, v, msg)
	v, msg, _ = judge(otherEntityRecord(verdict.OpFail, 404, `{"error":"no such order"}`, 1, 0), p)
	require.Equal(t, verdict.Info, v, msg)
}

// Under a global ledger one count holds both entities' effects.
func TestOtherEntityUnderAGlobalLedger(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	p.Operation.Path = "/v1/orders/{{.Entity}}/refunds"
	p.SideEffects.Scope = profile.ScopeGlobal
	judge := checker(t, "scope/other-entity")
	rec := func(status int, body string, n int) verdict.Record {
		return newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(2, "other", verdict.OpOK, status, body, nil).
			at(4, scenarios.ControlStep, verdict.OpOK, 201, committed, nil).record(n)
	}
	v, msg, _ := judge(rec(201, `{"id":"re_2","amount":4900}`, 2), p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, _ = judge(rec(201, committed, 1), p)
	require.Equal(t, verdict.Fail, v, msg)
	v, msg, _ = judge(rec(201, `{"id":"re_2","amount":4900}`, 3), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "3 side effects from two requests")
}
