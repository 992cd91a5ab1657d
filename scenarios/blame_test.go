package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/verdict"
)

// A FAIL names the attempt that broke the rule (its completion event) and what it should
// have got; a PASS blames nothing.

func TestMismatchAnsweredSuccessBlamesTheAlteredAttempt(t *testing.T) {
	t.Parallel()
	rec := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "altered", verdict.OpOK, 201, committed, nil).record(1)
	v, _, ev := checker(t, "fingerprint/mismatch")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, []verdict.Blame{{Index: 3, Want: "422 (mismatch)",
		Committed: &verdict.Response{Status: 201, Body: []byte(committed)}}}, ev.Blame, "compared with the original's response it replayed")

	ok := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "altered", verdict.OpFail, 422, "mismatch", nil).record(1)
	v, _, ev = checker(t, "fingerprint/mismatch")(ok, refProfile(t))
	require.Equal(t, verdict.Pass, v)
	require.Empty(t, ev.Blame)
}

func TestDivergedReplayBlamesTheRetryWithTheCommittedResponse(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 0, "", nil).
		at(10, "retry", verdict.OpOK, 201, `{"id":"re_regenerated","amount":4900}`, nil).
		record(1)
	rec.Journal = []faultproxy.Record{{Seq: 1, ReachedUpstream: true, UpstreamStatus: 201, UpstreamBody: []byte(committed)}}
	v, _, ev := checker(t, "replay/after-reset")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Len(t, ev.Blame, 1)
	require.Equal(t, 3, ev.Blame[0].Index)
	require.Equal(t, "the committed 201, byte for byte", ev.Blame[0].Want)
	require.Equal(t, &verdict.Response{Status: 201, Body: []byte(committed)}, ev.Blame[0].Committed)
}

func TestStuckKeyBlamesTheRefusedRetry(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 0, "", nil).
		at(1300, "retry", verdict.OpFail, 409, `{"title":"in use"}`, nil).
		record(0)
	v, _, ev := checker(t, "recovery/crash-after-key")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Len(t, ev.Blame, 1)
	require.Equal(t, 3, ev.Blame[0].Index)
	require.Equal(t, "the committed success", ev.Blame[0].Want)
}

func TestDuplicateExecutionBlamesTheRetry(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 503, "", nil).
		at(10, "retry", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		record(2)
	v, _, ev := checker(t, "replay/after-503")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, []verdict.Blame{{Index: 3, Want: "the committed response, no second execution"}}, ev.Blame)
}

func TestBusinessErrorReplayedAsSuccessBlamesTheRepeatAgainstTheStoredError(t *testing.T) {
	t.Parallel()
	rec := newHistory().at(0, "business", verdict.OpFail, 402, `{"title":"limit"}`, nil).
		at(5, "repeat", verdict.OpOK, 200, "", nil).record(0)
	v, _, ev := checker(t, "storage/business-4xx")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["fabricated"])
	require.Len(t, ev.Blame, 1)
	require.Equal(t, 3, ev.Blame[0].Index)
	require.Equal(t, &verdict.Response{Status: 402, Body: []byte(`{"title":"limit"}`)}, ev.Blame[0].Committed)
}

func TestBurstWithTwoResponsesBlamesTheSecondAgainstTheFirst(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "burst", verdict.OpOK, 201, committed, nil).
		at(0, "burst", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil).
		at(0, "burst", verdict.OpFail, 409, "busy", nil).
		record(2)
	v, _, ev := checker(t, "race/burst-50")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Len(t, ev.Blame, 1)
	require.Equal(t, 3, ev.Blame[0].Index, "the success with the other response, not the first or the 409")
	require.Equal(t, []byte(committed), ev.Blame[0].Committed.Body)
}
