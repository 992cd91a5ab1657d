package faultproxy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func keyed(seq uint64, key, body string) faultproxy.Record {
	return faultproxy.Record{Seq: seq, Method: "POST", Path: "/v1/refunds", Key: key, HasKey: true, BodySHA256: body}
}

func TestFreshKeyRetriesNamesAPayloadSentUnderTwoKeys(t *testing.T) {
	records := []faultproxy.Record{
		keyed(3, "k2", "body-a"), // out of order on purpose: the journal may be paged
		keyed(1, "k1", "body-a"),
		keyed(2, "k9", "body-b"),
		keyed(4, "k9", "body-b"),
		keyed(5, "k3", "body-a"),
	}
	got := faultproxy.FreshKeyRetries(records)
	require.Len(t, got, 1)
	require.Equal(t, "body-a", got[0].BodySHA256)
	require.Equal(t, []string{"k1", "k2", "k3"}, got[0].Keys)
	require.Equal(t, []uint64{1, 3, 5}, got[0].Seqs)
}

func TestFreshKeyRetriesAcceptsRetriesUnderOneKey(t *testing.T) {
	records := []faultproxy.Record{keyed(1, "k1", "a"), keyed(2, "k1", "a"), keyed(3, "k2", "b")}
	require.Empty(t, faultproxy.FreshKeyRetries(records))
}

func TestFreshKeyRetriesSeparatesPathsAndIgnoresUnkeyed(t *testing.T) {
	other := keyed(2, "k2", "a")
	other.Path = "/v1/invoices"
	unkeyed := faultproxy.Record{Seq: 3, Method: "POST", Path: "/v1/refunds", BodySHA256: "a"}
	require.Empty(t, faultproxy.FreshKeyRetries([]faultproxy.Record{keyed(1, "k1", "a"), other, unkeyed}))
}

func TestUnkeyedAttemptsInJournalOrder(t *testing.T) {
	records := []faultproxy.Record{
		{Seq: 4, Method: "POST"},
		keyed(1, "k1", "a"),
		{Seq: 2, Method: "POST"},
	}
	got := faultproxy.UnkeyedAttempts(records)
	require.Len(t, got, 2)
	require.Equal(t, uint64(2), got[0].Seq)
	require.Equal(t, uint64(4), got[1].Seq)
}

func TestArrivalOrderIsTimeNotSeq(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reset := keyed(8, "k1", "a") // journaled after its own retry
	reset.Time = t0
	retry := keyed(7, "k1", "a")
	retry.Time = t0.Add(time.Millisecond)
	_, byKey := faultproxy.AttemptsByKey([]faultproxy.Record{retry, reset})
	require.Equal(t, []uint64{8, 7}, []uint64{byKey["k1"][0].Seq, byKey["k1"][1].Seq})
}

func TestAttemptsByKeyGroupsInFirstSeenOrder(t *testing.T) {
	records := []faultproxy.Record{keyed(3, "k1", "a"), keyed(1, "k2", "b"), keyed(2, "k1", "a"), {Seq: 5}}
	keys, byKey := faultproxy.AttemptsByKey(records)
	require.Equal(t, []string{"k2", "k1"}, keys)
	require.Len(t, byKey["k1"], 2)
	require.Equal(t, uint64(2), byKey["k1"][0].Seq)
	require.Equal(t, uint64(3), byKey["k1"][1].Seq)
	require.NotContains(t, byKey, "")
}
