package report

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/verdict"
)

// Body rendering limits: a line in a console or an example, a block in the HTML.
const (
	bodyLineBytes  = 160
	bodyBlockBytes = 4096
)

// marks ties a record's history to its journal, so that what a checker blamed (history
// events, verdict.Blame) can be marked on the journal rows and the arrows drawn from
// the journal, and the journal's payloads can be named by the step that sent them.
type marks struct {
	byOp      map[int]verdict.Blame    // completion event index → blame
	byJournal map[uint64]verdict.Blame // journal seq → blame
	opOf      map[uint64]verdict.Op    // journal seq → the completion event it served
}

// newMarks pairs every completion event with the journal record of the same attempt.
// The journal has no link back to the client's history, so the pairing is by key and
// attempt ordinal: the k-th attempt the client invoked with a key is the proxy's k-th
// attempt of that key, unless their statuses disagree (concurrent attempts can reach the
// proxy in another order), when the first unpaired record of the key with the same
// client status is taken instead. Keyless attempts pair in arrival order.
func newMarks(rec *verdict.Record, blames []verdict.Blame) marks {
	m := marks{byOp: map[int]verdict.Blame{}, byJournal: map[uint64]verdict.Blame{}, opOf: map[uint64]verdict.Op{}}
	if rec == nil {
		return m
	}
	for _, b := range blames {
		m.byOp[b.Index] = b
	}
	type attempt struct {
		step            string
		client, attempt int
	}
	ordinal := map[attempt]int{}
	invoked := map[string]int{}
	for _, op := range rec.History {
		if op.Type == verdict.OpInvoke {
			invoked[op.Key]++
			ordinal[attempt{op.Step, op.Client, op.Attempt}] = invoked[op.Key]
		}
	}
	byKey := map[string][]faultproxy.Record{}
	for _, j := range arrivalOrder(rec) {
		k := j.Key
		if !j.HasKey {
			k = ""
		}
		byKey[k] = append(byKey[k], j)
	}
	claimed := map[uint64]bool{}
	for _, op := range rec.History {
		if op.Type == verdict.OpInvoke {
			continue
		}
		list := byKey[op.Key]
		k := ordinal[attempt{op.Step, op.Client, op.Attempt}]
		var pick *faultproxy.Record
		agrees := func(j faultproxy.Record) bool {
			return op.Status == 0 || j.ClientStatus == 0 || j.ClientStatus == op.Status
		}
		for i := range list {
			j := list[i]
			nth := j.Attempt == k
			if op.Key == "" {
				nth = i+1 == k
			}
			if nth && !claimed[j.Seq] && agrees(j) {
				pick = &list[i]
				break
			}
		}
		if pick == nil {
			for i := range list {
				if !claimed[list[i].Seq] && agrees(list[i]) {
					pick = &list[i]
					break
				}
			}
		}
		if pick == nil {
			continue // a direct step, or an attempt the journal did not keep
		}
		claimed[pick.Seq] = true
		m.opOf[pick.Seq] = op
		if b, ok := m.byOp[op.Index]; ok {
			m.byJournal[pick.Seq] = b
		}
	}
	return m
}

// wantMark is the marker a blamed attempt carries in every timeline: "✗ want 422 (mismatch)".
func wantMark(b verdict.Blame) string { return "✗ want " + b.Want }

// blameLines describe each blamed attempt for text reports: what it got (the body as
// JSON text), what was wanted, and how its body differs from the committed one.
func blameLines(ev verdict.Evidence) []string {
	if len(ev.Blame) == 0 || ev.Record == nil {
		return nil
	}
	ops := map[int]verdict.Op{}
	for _, op := range ev.Record.History {
		ops[op.Index] = op
	}
	keys := newKeyLabels(ev.Record)
	var out []string
	for _, b := range ev.Blame {
		op, ok := ops[b.Index]
		if !ok {
			out = append(out, fmt.Sprintf("✗ event #%d: %s", b.Index, wantMark(b)))
			continue
		}
		out = append(out, fmt.Sprintf("✗ #%d %s: got %s; want %s", op.Index, attemptName(op, keys), gotText(op), b.Want))
		if b.Committed != nil {
			out = append(out, "  committed vs this answer: "+diffText(b.Committed.Status, op.Status, bodytext.Diff(b.Committed.Body, op.Body)))
		}
	}
	return out
}

// attemptName is "altered (K1, attempt 1)": the step, the key label and the client's
// attempt number.
func attemptName(op verdict.Op, keys *keyLabels) string {
	return fmt.Sprintf("%s (%s, attempt %d)", orDash(op.Step), keys.label(op.Key, op.Key != ""), op.Attempt)
}

// gotText is what an answer was: "201 {"id":"re_1"}", or the transport error.
func gotText(op verdict.Op) string {
	switch {
	case op.Status != 0 && len(op.Body) > 0:
		return fmt.Sprintf("%d %s", op.Status, bodytext.Line(op.Body, bodyLineBytes))
	case op.Status != 0:
		return fmt.Sprintf("%d %s", op.Status, bodytext.Empty)
	case op.Error != "":
		return string(op.Type) + " (" + op.Error + ")"
	}
	return string(op.Type)
}

// diffText is "status 201 → 200; amount: 4900 → 5000; id: "re_a" → "re_b"", or
// "identical (the committed response itself)" when nothing differs.
func diffText(from, to int, changes []bodytext.Change) string {
	var parts []string
	if from != to {
		parts = append(parts, fmt.Sprintf("status: %d → %d", from, to))
	}
	if len(changes) > 0 {
		parts = append(parts, bodytext.Summary(changes))
	}
	if len(parts) == 0 {
		return "identical (the committed response itself)"
	}
	return strings.Join(parts, "; ")
}

// blameSummary is the first blamed attempt on one line, for the Markdown summary:
// "altered (K1, attempt 2) got 201, want 422 (mismatch); committed vs this answer: amount:
// 4900 → 5000 (and 2 more attempts)". "" when nothing was blamed.
func blameSummary(ev verdict.Evidence) string {
	if len(ev.Blame) == 0 || ev.Record == nil {
		return ""
	}
	b := ev.Blame[0]
	var op verdict.Op
	found := false
	for _, o := range ev.Record.History {
		if o.Index == b.Index {
			op, found = o, true
			break
		}
	}
	if !found {
		return ""
	}
	s := fmt.Sprintf("%s got %s, want %s", attemptName(op, newKeyLabels(ev.Record)), describeAnswer(op), b.Want)
	if b.Committed != nil {
		s += "; committed vs this answer: " + shorten(diffText(b.Committed.Status, op.Status, bodytext.Diff(b.Committed.Body, op.Body)), 160)
	}
	if n := len(ev.Blame) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more attempt(s))", n)
	}
	return s
}
