package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/verdict"
)

// A repeat that may have reached the target after the declared retention (1 s in
// refProfile) may execute anew: a response of its own, without the replay marker, with
// its own Location, one more side effect. On a loaded machine a repeat sent right after
// its original can land there; none of that is a violation, so the checkers say UNKNOWN.
// The same answers inside the window stay a violation.
func TestLateRepeatIsNeverAViolation(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	first := `{"id":"re_1"}`
	anew := `{"id":"re_2"}`
	firstHeaders := map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/re_1"}
	anewHeaders := map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/re_2"}
	replayHeaders := map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/re_1", "Idempotent-Replayed": "true"}
	cases := []struct {
		id     string
		record func(repeatAnsweredAt int) verdict.Record
		inside verdict.Verdict // the verdict when the repeat was answered inside the window
	}{
		{"replay/fidelity-body", func(at int) verdict.Record {
			return newHistory().at(0, "original", verdict.OpOK, 201, first, firstHeaders).
				at(10, "retry", verdict.OpOK, 201, first, replayHeaders).
				span(20, at, "repeat", verdict.OpOK, 201, anew, anewHeaders).record(2)
		}, verdict.Fail},
		{"replay/fidelity-headers", func(at int) verdict.Record {
			return newHistory().at(0, "original", verdict.OpOK, 201, first, firstHeaders).
				span(10, at, "repeat", verdict.OpOK, 201, first, anewHeaders).record(1)
		}, verdict.Fail},
		{"replay/marker", func(at int) verdict.Record {
			return newHistory().at(0, "original", verdict.OpOK, 201, first, firstHeaders).
				span(10, at, "repeat", verdict.OpOK, 201, anew, anewHeaders).record(2)
		}, verdict.Fail}, // inside the window, two effects: the repeat executed again, no replay
		{"fingerprint/json-key-order", func(at int) verdict.Record {
			return newHistory().at(0, "original", verdict.OpOK, 201, first, firstHeaders).
				span(10, at, "variant", verdict.OpOK, 201, anew, anewHeaders).record(2)
		}, verdict.Fail},
		{"fingerprint/mismatch", func(at int) verdict.Record {
			return newHistory().at(0, "original", verdict.OpOK, 201, first, firstHeaders).
				span(10, at, "altered", verdict.OpOK, 201, anew, anewHeaders).record(2)
		}, verdict.Fail},
		{"race/in-flight-other-payload", func(at int) verdict.Record {
			return newHistory().span(0, 400, "original", verdict.OpOK, 201, first, firstHeaders).
				span(5, at, "repeat", verdict.OpOK, 201, anew, anewHeaders).record(2)
		}, verdict.Fail},
		{"race/in-flight-not-fabricated", func(at int) verdict.Record {
			// A slow original (2 s): the repeat, answered before it, with a body of its own.
			return newHistory().span(0, 2000, "original", verdict.OpOK, 201, first, firstHeaders).
				span(5, at, "repeat", verdict.OpOK, 201, anew, anewHeaders).record(2)
		}, verdict.Fail},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			v, msg, _ := judgeWith(t, tc.id, tc.record(1500), p)
			require.Equal(t, verdict.Unknown, v, msg)
			require.Contains(t, msg, "after the declared 1s retention, where a new execution is allowed")
			v, msg, _ = judgeWith(t, tc.id, tc.record(900), p)
			require.Equal(t, tc.inside, v, msg)
		})
	}
}

// A settle step that reached the target after the retention may execute anew: one more
// side effect is allowed there, never "two side effects for one key".
func TestLateSettleMayExecuteAnew(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	cases := map[string]func(settleAt int) verdict.Record{
		"storage/5xx-not-pinned": func(at int) verdict.Record {
			return newHistory().at(0, "failing", verdict.OpInfo, 503, "failed", nil).
				at(10, "retry", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
				span(20, at, "settle", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
		},
		"storage/validation-not-stored": func(at int) verdict.Record {
			return newHistory().at(0, "invalid", verdict.OpFail, 400, `{"title":"validation failed"}`, nil).
				at(10, "retry", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
				span(20, at, "settle", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
		},
	}
	for id, record := range cases {
		t.Run(id, func(t *testing.T) {
			v, msg, ev := judgeWith(t, id, record(1500), p)
			require.NotEqual(t, verdict.Fail, v, msg)
			require.Zero(t, ev.Categories["duplicated"], msg)
			v, msg, ev = judgeWith(t, id, record(900), p)
			require.Equal(t, verdict.Fail, v, msg)
			require.Equal(t, 1, ev.Categories["duplicated"], msg)
		})
	}
}
