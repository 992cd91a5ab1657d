package scan

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/verdict"
)

// Headline is a scan's finding in one sentence, with the counts behind it.
type Headline struct {
	// Writes counts the operations that are not read-only; Probed those the probes ran on.
	Writes int `json:"writes"`
	Probed int `json:"probed"`
	// Safe names the operations shown safe to retry (Row.SafeToRetry).
	Safe []string `json:"safe"`
	// Lying names the operations that declare themselves idempotent (idempotentHint,
	// PUT, DELETE) or read-only and were seen to break it.
	Lying []string `json:"lying"`
	// Cells counts the matrix's cells by verdict.
	Cells map[verdict.Verdict]int `json:"cells"`
	// Text is the sentence: "2 of 6 write tools are safe to retry (refund, create_invoice);
	// 1 declares itself idempotent and executed twice: add_note".
	Text string `json:"text"`
}

func headline(rep *Report) Headline {
	h := Headline{Cells: map[verdict.Verdict]int{}}
	noun := "write tools"
	if rep.Target.Kind == KindOpenAPI {
		noun = "write operations"
	}
	for _, r := range rep.Rows {
		op := r.Operation
		if !op.ReadOnly {
			h.Writes++
		}
		if op.Probed() {
			h.Probed++
		}
		if r.SafeToRetry() && !op.ReadOnly {
			h.Safe = append(h.Safe, op.Name)
		}
		if r.Cell(CheckAnnotation).Verdict == verdict.Fail {
			h.Lying = append(h.Lying, op.Name)
		}
		for _, c := range r.Cells {
			h.Cells[c.Verdict]++
		}
	}
	var twice, touched []string
	for _, r := range rep.Rows {
		if r.Cell(CheckAnnotation).Verdict != verdict.Fail {
			continue
		}
		if r.Operation.ReadOnly {
			touched = append(touched, r.Operation.Name)
		} else {
			twice = append(twice, r.Operation.Name)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d %s are safe to retry", len(h.Safe), h.Writes, noun)
	if len(h.Safe) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(h.Safe, ", "))
	}
	if len(twice) > 0 {
		claim := "idempotentHint"
		if rep.Target.Kind == KindOpenAPI {
			claim = "idempotence by method (PUT, DELETE)"
		}
		fmt.Fprintf(&b, "; %d %s %s and executed twice: %s", len(twice), plural(len(twice), "declares", "declare"), claim, strings.Join(twice, ", "))
	}
	if len(touched) > 0 {
		fmt.Fprintf(&b, "; %d %s readOnlyHint and changed the ledger: %s", len(touched), plural(len(touched), "declares", "declare"), strings.Join(touched, ", "))
	}
	if n := len(rep.Rows) - h.Probed; n > 0 {
		fmt.Fprintf(&b, "; %d not probed", n)
	}
	h.Text = b.String()
	return h
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
