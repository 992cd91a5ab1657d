package report

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/verdict"
)

// MaxTimelineRows bounds the rows a timeline shows (text and SVG); a burst of 1,000
// attempts is summarised after the first rows instead of drowning the report.
const MaxTimelineRows = 24

// keyLabels names each distinct idempotency key K1, K2, … in order of first use, so
// timelines stay aligned however long the keys are (up to 256 characters).
type keyLabels struct {
	names map[string]string
	order []string
	shown map[string]bool // keys a printed row named: the legend explains only those
}

func newKeyLabels(rec *verdict.Record) *keyLabels {
	k := &keyLabels{names: map[string]string{}, shown: map[string]bool{}}
	for _, j := range rec.Journal {
		k.add(j.Key, j.HasKey)
	}
	for _, op := range rec.History {
		k.add(op.Key, op.Key != "")
	}
	return k
}

func (k *keyLabels) add(key string, has bool) {
	if !has {
		return
	}
	if _, ok := k.names[key]; ok {
		return
	}
	k.order = append(k.order, key)
	k.names[key] = fmt.Sprintf("K%d", len(k.order))
}

// label is the short name of a key; "-" when the request carried none.
func (k *keyLabels) label(key string, has bool) string {
	if !has {
		return "-"
	}
	k.shown[key] = true
	return k.names[key]
}

// legend lists "K1=<key>" pairs for the keys the printed rows named, each key shortened
// to keep the line readable; the keys of rows summarised away (a scenario sending
// hundreds of keys) are only counted.
func (k *keyLabels) legend() string {
	parts := make([]string, 0, len(k.shown)+1)
	for _, key := range k.order {
		if k.shown[key] {
			parts = append(parts, k.names[key]+"="+shorten(printable(key), 40))
		}
	}
	if rest := len(k.order) - len(parts); rest > 0 {
		parts = append(parts, fmt.Sprintf("(%d more keys in rows not shown)", rest))
	}
	return strings.Join(parts, " ")
}

// Timeline renders a record as aligned text: the proxy journal (what really reached the
// target and what the client got back), the client's history, the key and payload
// legends, and the ledger counts. Suites print it in failure messages.
func Timeline(rec *verdict.Record) string {
	return timeline(rec, nil, "")
}

// ResultTimeline is Timeline for a result: the attempts its checker blamed are marked
// "✗ want …" on their journal row and history event, and the payloads are named by the
// profile field the scenario's steps send (P1=operation.body, P2=operation.altered_body).
// The console and JUnit reports print it for failing results.
func ResultTimeline(r verdict.Result) string {
	return timeline(r.Evidence.Record, r.Evidence.Blame, r.ScenarioID)
}

func timeline(rec *verdict.Record, blames []verdict.Blame, scenarioID string) string {
	if rec == nil {
		return "  (no record)\n"
	}
	var b strings.Builder
	keys := newKeyLabels(rec)
	m := newMarks(rec, blames)
	var legend []string
	var sessions string
	if len(rec.Journal) > 0 {
		b.WriteString("  proxy journal (ground truth, in arrival order):\n")
		journal := arrivalOrder(rec)
		payloads := newPayloadLabels(rec, journal)
		legend = payloadLegend(journal, payloads, m, scenarioID)
		sessions = payloads.sessionLegend()
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    seq\tkey\ttry\tmethod path\trequest\tfault\tupstream\tclient\toutcome\t")
		row := func(j faultproxy.Record) {
			fmt.Fprintf(tw, "    %d\t%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				j.Seq, keys.label(j.Key, j.HasKey), attemptText(j.Attempt), j.Method, shorten(j.Path, 40),
				orDash(requestNotes(j, payloads)), orDash(faultText(j)), upstreamText(j), clientText(j), j.Outcome, journalMark(m, j))
		}
		for i, j := range journal {
			if i == MaxTimelineRows {
				fmt.Fprintf(tw, "    …\t\t\t%s\t\t\t\t\t\t\n", summariseRest(journal[i:]))
				// The blamed attempts are shown even past the limit: they are the point.
				for _, late := range journal[i:] {
					if _, ok := m.byJournal[late.Seq]; ok {
						row(late)
					}
				}
				break
			}
			row(j)
		}
		tw.Flush()
	}
	if len(rec.History) > 0 {
		b.WriteString("  client history:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    #\tclient\tstep\tattempt\ttype\tkey\tresult\t")
		row := func(op verdict.Op) {
			fmt.Fprintf(tw, "    %d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\n",
				op.Index, op.Client, orDash(op.Step), op.Attempt, op.Type, keys.label(op.Key, op.Key != ""), opResult(op), opMark(m, op))
		}
		for i, op := range rec.History {
			if i == 2*MaxTimelineRows {
				fmt.Fprintf(tw, "    …\t\t%d more events\t\t\t\t\t\n", len(rec.History)-i)
				for _, late := range rec.History[i:] {
					if opMark(m, late) != "" {
						row(late)
					}
				}
				break
			}
			row(op)
		}
		tw.Flush()
	}
	if len(keys.order) > 0 {
		fmt.Fprintf(&b, "  keys: %s\n", keys.legend())
	}
	if sessions != "" {
		fmt.Fprintf(&b, "  sessions: %s\n", sessions)
	}
	if len(legend) > 0 {
		fmt.Fprintf(&b, "  payloads: %s\n", strings.Join(legend, "  "))
	}
	writeVendorTimeline(&b, rec)
	writeStoreTimeline(&b, rec)
	fmt.Fprintf(&b, "  ledger: %s\n", ledgerText(rec))
	return b.String()
}

// journalMark is the last cell of a journal row: the blame of the attempt, if any.
func journalMark(m marks, j faultproxy.Record) string {
	if bl, ok := m.byJournal[j.Seq]; ok {
		return "  " + wantMark(bl)
	}
	return ""
}

// opMark is the last cell of a history row: the blame of the event, if any.
func opMark(m marks, op verdict.Op) string {
	if bl, ok := m.byOp[op.Index]; ok && op.Type != verdict.OpInvoke {
		return "  " + wantMark(bl)
	}
	return ""
}

// summariseRest folds the journal records past the row limit into counts per
// (upstream status, client result) so a burst still shows its shape.
func summariseRest(rest []faultproxy.Record) string {
	counts := map[string]int{}
	for _, j := range rest {
		counts[upstreamText(j)+" → "+clientText(j)]++
	}
	parts := make([]string, 0, len(counts))
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%d× %s", n, k))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d more attempts: %s", len(rest), strings.Join(parts, ", "))
}

func attemptText(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// faultText is the fault applied to an attempt and its main parameter, if any.
func faultText(j faultproxy.Record) string {
	if j.Fault == "" {
		return ""
	}
	if j.Rule != "" && j.Rule != j.Fault {
		return j.Fault + " (" + j.Rule + ")"
	}
	return j.Fault
}

// upstreamText is what the target did: its status, "×2" for a duplicate delivery, or
// "not reached".
func upstreamText(j faultproxy.Record) string {
	if !j.ReachedUpstream {
		return "not reached"
	}
	s := "reached"
	if j.UpstreamStatus != 0 {
		s = fmt.Sprint(j.UpstreamStatus)
	}
	if j.UpstreamCalls > 1 {
		s += fmt.Sprintf(" ×%d", j.UpstreamCalls)
	}
	return s
}

// clientText is what the client got: a status, or how the response was lost.
func clientText(j faultproxy.Record) string {
	switch {
	case j.ClientResult == faultproxy.ClientDelivered && j.ClientStatus != 0:
		return fmt.Sprint(j.ClientStatus)
	case j.ClientStatus != 0:
		return fmt.Sprintf("%d %s", j.ClientStatus, j.ClientResult)
	case j.ClientResult != "":
		return j.ClientResult
	}
	return "?"
}

func opResult(op verdict.Op) string {
	switch {
	case op.Type == verdict.OpInvoke:
		return ""
	case op.Status != 0 && op.Error != "":
		return fmt.Sprintf("%d %s", op.Status, shorten(op.Error, 50))
	case op.Status != 0:
		return fmt.Sprintf("%d %s", op.Status, shorten(bodytext.Line(op.Body, bodyLineBytes), 50))
	}
	return shorten(op.Error, 60)
}

// ledgerText is "refund=1 invoice=0" in key order, or the probe error.
func ledgerText(rec *verdict.Record) string {
	if rec.LedgerErr != "" {
		return "probe failed: " + rec.LedgerErr
	}
	if len(rec.Ledger) == 0 {
		return "(not probed)"
	}
	parts := make([]string, 0, len(rec.Ledger))
	for _, k := range sortedKeys(rec.Ledger) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, rec.Ledger[k]))
	}
	return strings.Join(parts, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	// Between words where a space falls in the last third of what fits: a message cut
	// mid-word reads as another word.
	cut := n - 1
	if space := strings.LastIndex(string(r[:n-1]), " "); space >= 0 {
		if at := len([]rune(string(r[:n-1])[:space])); at > n*2/3 {
			return strings.TrimRight(string(r[:at]), " ,;:") + " …"
		}
	}
	return string(r[:cut]) + "…"
}

// printable replaces control characters (a scenario sends keys with them on purpose)
// with their escaped form so they cannot garble a terminal or a table.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
