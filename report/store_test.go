package report_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/storefault"
	"github.com/idemproof/idemproof/verdict"
)

func TestTheTimelineShowsTheStoreSwitchesAndWhatThePointSaw(t *testing.T) {
	t.Parallel()
	at := time.Now()
	rec := &verdict.Record{Ledger: map[string]int{verdict.LedgerOperation: 1}, Store: []verdict.StoreEvent{
		{At: at, Fault: "down", Step: "retry", Stats: storefault.Stats{Connections: 3, Cut: 1}},
		{At: at, Fault: verdict.StoreUp, Step: "after", Stats: storefault.Stats{Connections: 4, Refused: 1, Cut: 2}},
	}}
	out := report.Timeline(rec)
	require.Contains(t, out, "store: down before retry (then 1 connection(s), 1 refused, 1 cut, 0 byte(s) to the store); up before after")
}
