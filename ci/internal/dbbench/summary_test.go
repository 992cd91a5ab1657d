package dbbench_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/ci/internal/dbbench"
	"github.com/stretchr/testify/require"
)

// A report of pgbench 15, as the container prints it for a -T run.
const report = `pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: /dbbench/keyed-two-rows.sql
scaling factor: 1
query mode: prepared
number of clients: 8
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 132007
number of failed transactions: 0 (0.000%)
latency average = 0.302 ms
initial connection time = 9.718 ms
tps = 26429.137754 (without initial connection time)
`

func TestParsePgbenchReadsTransactionsAndRate(t *testing.T) {
	p, err := dbbench.ParsePgbench(report)
	require.NoError(t, err)
	require.Equal(t, dbbench.Pgbench{Transactions: 132007, TPS: 26429.137754}, p)

	// A -t run prints done/planned.
	p, err = dbbench.ParsePgbench(strings.Replace(report, "processed: 132007", "processed: 80000/80000", 1))
	require.NoError(t, err)
	require.EqualValues(t, 80000, p.Transactions)
}

func TestParsePgbenchRefusesIncompleteOrFailedRuns(t *testing.T) {
	_, err := dbbench.ParsePgbench("pgbench: error: random range is too large\n")
	require.ErrorContains(t, err, `lacks "number of transactions actually processed:", "tps = "`)

	_, err = dbbench.ParsePgbench(strings.Replace(report, "failed transactions: 0 (0.000%)", "failed transactions: 12 (0.009%)", 1))
	require.ErrorContains(t, err, "12 of 132019 transactions failed")

	_, err = dbbench.ParsePgbench(strings.Replace(report, "tps = 26429.137754", "tps = fast", 1))
	require.ErrorContains(t, err, `tps line "tps = fast`)
}

// Each round's keyed run is divided by the same round's unkeyed run of its model, so the
// ratio's median is not the ratio of the medians.
func TestSummarisePairsRunsByRound(t *testing.T) {
	rows, err := dbbench.Summarise([]dbbench.Sample{
		{Model: "a", Round: 1, TPS: 100}, {Model: "a", Keyed: true, Round: 1, TPS: 50},
		{Model: "b", Round: 1, TPS: 10}, {Model: "b", Keyed: true, Round: 1, TPS: 9},
		{Model: "a", Round: 2, TPS: 200}, {Model: "a", Keyed: true, Round: 2, TPS: 180},
		{Model: "a", Round: 3, TPS: 400}, {Model: "a", Keyed: true, Round: 3, TPS: 280},
	})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	a := rows[0]
	require.Equal(t, "a", a.Model)
	require.Equal(t, 3, a.Rounds)
	require.Equal(t, dbbench.Spread{Median: 200, Min: 100, Max: 400}, a.Unkeyed)
	require.Equal(t, dbbench.Spread{Median: 180, Min: 50, Max: 280}, a.Keyed)
	require.InDelta(t, 0.7, a.Ratio.Median, 1e-9) // 0.5, 0.9, 0.7
	require.InDelta(t, 0.5, a.Ratio.Min, 1e-9)
	require.InDelta(t, 0.9, a.Ratio.Max, 1e-9)
	require.Equal(t, "b", rows[1].Model)

	table := dbbench.Table(rows)
	require.Contains(t, table, "| a | 3 | 200 (100–400) | 180 (50–280) | 0.70 (0.50–0.90) |\n")
	require.Contains(t, table, "| b | 1 | 10 (10–10) | 9 (9–9) | 0.90 (0.90–0.90) |\n")

	_, err = dbbench.Summarise([]dbbench.Sample{{Model: "a", Round: 1, TPS: 100}})
	require.ErrorContains(t, err, `model "a", round 1: want both an unkeyed and a keyed run`)
	_, err = dbbench.Summarise(nil)
	require.Error(t, err)
}

// Every model's files are embedded, so the command cannot ask the container for a script
// it was not given.
func TestEveryModelsScriptsAreEmbedded(t *testing.T) {
	for _, m := range dbbench.Models {
		for _, name := range []string{dbbench.UnkeyedScript, m.Keyed, m.DDL} {
			if name == "" {
				continue
			}
			b, err := fs.ReadFile(dbbench.Scripts, "sql/"+name)
			require.NoError(t, err, m.Name)
			require.NotEmpty(t, b, name)
		}
	}
}
