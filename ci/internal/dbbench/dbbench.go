// Package dbbench is the database-alone benchmark behind `ci/bench database`: pgbench
// inside the project's PostgreSQL container runs the unkeyed refund and the keyed one
// (sql/), per data model, in interleaved rounds, and the keyed ÷ unkeyed throughput is
// paired round by round, so drift on a shared machine lands on both sides of a ratio. It
// says what the database itself charges for a key, before any Go code runs: the floor
// under the reference server's keyed/unkeyed ratios (docs/reference.md).
//
// The models:
//   - two rows: pgstore's schema and its one-transaction statement for a new key (the
//     key row with the stored response, then the refund), as the reference runs it;
//   - two phases: pgstore's two-phase path for a new key, the locked key row committed
//     first, then the fenced completion with the refund (work outside the database);
//   - one row: the key's record in its refund's ledger row, unique where set (one-row.sql),
//     the data model the two-row one is compared against;
//   - one row, no index: the same row without the key's indexes, to show what they cost.
//     Not a model to use: nothing stops a second refund for the same key.
//
// This package reads pgbench's output, pairs and summarises the runs; cmd/dbbench runs
// them and checks each one wrote exactly the rows it reported as transactions.
package dbbench

import (
	"embed"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/ci/internal/benchstat"
)

// Scripts are the pgbench scripts and the models' DDL, by file name.
//
//go:embed sql/*.sql
var Scripts embed.FS

// Model is a data model for keyed refunds and how to check its runs.
type Model struct {
	Name     string
	Database string // created for it, with pgstore's schema
	DDL      string // file in sql/ run after the schema, or ""
	Keyed    string // the keyed refund's script in sql/
	// KeyRows counts the keyed refunds' key records: each keyed transaction adds one.
	KeyRows string
}

// UnkeyedScript is every model's unkeyed refund.
const UnkeyedScript = "unkeyed.sql"

// LedgerRows counts refunds: every transaction of either kind adds one.
const LedgerRows = "SELECT count(*) FROM ledger"

// Models are the data models compared, the reference's first.
var Models = []Model{
	{Name: "two rows (pgstore)", Database: "two_rows", Keyed: "keyed-two-rows.sql",
		KeyRows: "SELECT count(*) FROM idempotency_keys"},
	{Name: "two phases (pgstore)", Database: "two_phases", Keyed: "keyed-two-phase.sql",
		KeyRows: "SELECT count(*) FROM idempotency_keys WHERE completed"},
	{Name: "one row", Database: "one_row", DDL: "one-row.sql", Keyed: "keyed-one-row.sql",
		KeyRows: "SELECT count(*) FROM ledger WHERE scope_hash IS NOT NULL"},
	{Name: "one row, no index", Database: "one_row_no_index", DDL: "one-row-no-index.sql", Keyed: "keyed-one-row-no-index.sql",
		KeyRows: "SELECT count(*) FROM ledger WHERE scope_hash IS NOT NULL"},
}

// Pgbench is what one pgbench run reported.
type Pgbench struct {
	Transactions int64   // "number of transactions actually processed: N"
	Failed       int64   // "number of failed transactions: N (…)"; 0 when not printed
	TPS          float64 // "tps = N (without initial connection time)"
}

// ParsePgbench reads pgbench's report. A report without the transactions processed or
// the rate is an error that quotes what is missing; a run with failed transactions too.
func ParsePgbench(out string) (Pgbench, error) {
	var p Pgbench
	var haveTx, haveTPS bool
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "number of transactions actually processed:"):
			f := strings.Fields(strings.TrimPrefix(line, "number of transactions actually processed:"))
			if len(f) == 0 {
				return p, fmt.Errorf("pgbench transactions line %q: no count", line)
			}
			done, _, _ := strings.Cut(f[0], "/") // -t runs print done/planned
			n, err := strconv.ParseInt(done, 10, 64)
			if err != nil {
				return p, fmt.Errorf("pgbench transactions line %q: %w", line, err)
			}
			p.Transactions, haveTx = n, true
		case strings.HasPrefix(line, "number of failed transactions:"):
			f := strings.Fields(strings.TrimPrefix(line, "number of failed transactions:"))
			if len(f) == 0 {
				return p, fmt.Errorf("pgbench failed-transactions line %q: no count", line)
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return p, fmt.Errorf("pgbench failed-transactions line %q: %w", line, err)
			}
			p.Failed = n
		case strings.HasPrefix(line, "tps = "):
			f := strings.Fields(strings.TrimPrefix(line, "tps = "))
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return p, fmt.Errorf("pgbench tps line %q: %w", line, err)
			}
			p.TPS, haveTPS = v, true
		}
	}
	var missing []string
	if !haveTx {
		missing = append(missing, `"number of transactions actually processed:"`)
	}
	if !haveTPS {
		missing = append(missing, `"tps = "`)
	}
	if len(missing) > 0 {
		return p, fmt.Errorf("pgbench output lacks %s", strings.Join(missing, ", "))
	}
	if p.Failed > 0 {
		return p, fmt.Errorf("pgbench: %d of %d transactions failed", p.Failed, p.Failed+p.Transactions)
	}
	return p, nil
}

// Sample is one run of a model's unkeyed or keyed refund in one round.
type Sample struct {
	Model string
	Keyed bool
	Round int
	TPS   float64
}

// Spread is the median and the range of a quantity over the rounds.
type Spread = benchstat.Spread

// Row is a model's summary: its unkeyed and keyed rates and the keyed ÷ unkeyed ratio,
// paired by round.
type Row struct {
	Model          string
	Rounds         int
	Unkeyed, Keyed Spread
	Ratio          Spread
}

// Summarise pairs each round's keyed run with the same round's unkeyed run of its model,
// rows in the order the models first appear. A round missing either run is an error.
func Summarise(samples []Sample) ([]Row, error) {
	type pair struct{ unkeyed, keyed float64 }
	var order []string
	runs := map[string]map[int]*pair{}
	for _, s := range samples {
		if runs[s.Model] == nil {
			runs[s.Model] = map[int]*pair{}
			order = append(order, s.Model)
		}
		p := runs[s.Model][s.Round]
		if p == nil {
			p = &pair{}
			runs[s.Model][s.Round] = p
		}
		if s.Keyed {
			p.keyed = s.TPS
		} else {
			p.unkeyed = s.TPS
		}
	}
	rows := make([]Row, 0, len(order))
	for _, m := range order {
		var unkeyed, keyed, ratio []float64
		rounds := make([]int, 0, len(runs[m]))
		for r := range runs[m] {
			rounds = append(rounds, r)
		}
		sort.Ints(rounds)
		for _, r := range rounds {
			p := runs[m][r]
			if p.unkeyed <= 0 || p.keyed <= 0 {
				return nil, fmt.Errorf("model %q, round %d: want both an unkeyed and a keyed run", m, r)
			}
			unkeyed, keyed, ratio = append(unkeyed, p.unkeyed), append(keyed, p.keyed), append(ratio, p.keyed/p.unkeyed)
		}
		rows = append(rows, Row{Model: m, Rounds: len(rounds), Unkeyed: benchstat.Of(unkeyed), Keyed: benchstat.Of(keyed), Ratio: benchstat.Of(ratio)})
	}
	if len(rows) == 0 {
		return nil, errors.New("no runs to summarise")
	}
	return rows, nil
}

// Table is rows as the Markdown table docs/reference.md quotes: median (range).
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| model | rounds | unkeyed tps | keyed tps | keyed ÷ unkeyed |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %.2f (%.2f–%.2f) |\n", r.Model, r.Rounds,
			r.Unkeyed.Median, r.Unkeyed.Min, r.Unkeyed.Max, r.Keyed.Median, r.Keyed.Min, r.Keyed.Max,
			r.Ratio.Median, r.Ratio.Min, r.Ratio.Max)
	}
	return b.String()
}
