package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// arrivalOrder is the journal sorted by arrival time (then sequence number): the proxy
// numbers an attempt when it finishes, so concurrent attempts come out of order, and a
// sequence diagram must read top to bottom in time.
func arrivalOrder(rec *verdict.Record) []faultproxy.Record {
	out := append([]faultproxy.Record(nil), rec.Journal...)
	sort.SliceStable(out, func(i, k int) bool {
		if !out[i].Time.Equal(out[k].Time) {
			return out[i].Time.Before(out[k].Time)
		}
		return out[i].Seq < out[k].Seq
	})
	return out
}

// payloadLabels names each distinct request body P1, P2, … by its hash — only useful
// when a record holds more than one payload (a mismatch, a fingerprint variant).
type payloadLabels map[string]string

func newPayloadLabels(journal []faultproxy.Record) payloadLabels {
	p := payloadLabels{}
	var order []string
	for _, j := range journal {
		if _, ok := p[j.BodySHA256]; !ok {
			order = append(order, j.BodySHA256)
			p[j.BodySHA256] = fmt.Sprintf("P%d", len(order))
		}
	}
	if len(order) < 2 {
		return payloadLabels{}
	}
	return p
}

// requestNotes is what distinguishes one attempt's request in a timeline: its payload
// label (when payloads differ), the scenario step (the runner's X-Idemproof-Step
// header) and any test hook header (X-Test-…) the profile declared.
func requestNotes(j faultproxy.Record, payloads payloadLabels) string {
	var notes []string
	if p := payloads[j.BodySHA256]; p != "" {
		notes = append(notes, p)
	}
	names := make([]string, 0, len(j.Headers))
	for name := range j.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case strings.EqualFold(name, scenarios.StepHeader):
			notes = append(notes, "step="+j.Headers[name])
		case strings.HasPrefix(strings.ToLower(name), "x-test-"):
			notes = append(notes, name+"="+j.Headers[name])
		}
	}
	return strings.Join(notes, " ")
}

// payloadSource names where a step's request body comes from in the profile:
// "operation.body", "operation.altered_body", "operation.body respelled (json-key-order)".
func payloadSource(st scenarios.Step) string {
	var s string
	switch st.Payload {
	case scenarios.PayloadOriginal:
		s = "operation.body"
	case scenarios.PayloadAltered:
		s = "operation.altered_body"
	case scenarios.PayloadOther:
		s = "other_operation.body"
	case scenarios.PayloadBusiness:
		s = "business_error.body"
	case scenarios.PayloadValidation:
		s = "validation_error.body"
	case scenarios.PayloadLedgerRead:
		s = "side_effects request (no body)"
	default:
		s = string(st.Payload)
	}
	if st.Variant != scenarios.VariantNone {
		s += " respelled (" + string(st.Variant) + ")"
	}
	return s
}

// maxPayloadLegend bounds the payloads a legend names, in the order of first use.
const maxPayloadLegend = 12

// payloadLegend explains the payload labels of a timeline: "P1=operation.body (step
// original, sha256 3f2a91c0…)". The step of a journal record is the client attempt it
// served (marks) or its step header; the scenario (when known by scenarioID) says which
// profile field the step sends. One entry per payload; none when the record has fewer
// than two payloads; at most maxPayloadLegend, then how many more.
func payloadLegend(journal []faultproxy.Record, payloads payloadLabels, m marks, scenarioID string) []string {
	if len(payloads) == 0 {
		return nil
	}
	sc, known := scenarios.Lookup(scenarioID)
	stepsOf := map[string][]string{} // sha → steps, in first-use order
	var order []string
	for _, j := range journal {
		sha := j.BodySHA256
		if _, ok := stepsOf[sha]; !ok {
			order = append(order, sha)
			stepsOf[sha] = nil
		}
		step := j.Headers[scenarios.StepHeader]
		if op, ok := m.opOf[j.Seq]; ok && op.Step != "" {
			step = op.Step
		}
		if step != "" && !slices.Contains(stepsOf[sha], step) {
			stepsOf[sha] = append(stepsOf[sha], step)
		}
	}
	parts := make([]string, 0, min(len(order), maxPayloadLegend+1))
	for i, sha := range order {
		if i == maxPayloadLegend {
			// A scenario of many keys (expiry/not-evicted: 500) sends as many payloads; the
			// journal rows shown are bounded, and so is their legend.
			parts = append(parts, fmt.Sprintf("(%d more payloads)", len(order)-i))
			break
		}
		var sources []string
		for _, step := range stepsOf[sha] {
			if src := stepSource(sc, known, step); src != "" && !slices.Contains(sources, src) {
				sources = append(sources, src)
			}
		}
		desc := strings.Join(sources, " / ")
		var notes []string
		if steps := stepsOf[sha]; len(steps) > 0 {
			notes = append(notes, "step "+strings.Join(steps, ", "))
		}
		if sha != "" {
			notes = append(notes, "sha256 "+shorten(sha, 9))
		} else {
			notes = append(notes, "no body")
		}
		if desc == "" {
			desc = strings.Join(notes, ", ")
		} else {
			desc += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, payloads[sha]+"="+desc)
	}
	return parts
}

// stepSource is the profile field a step of the scenario sends; the settle step sends
// the scenario's settle payload.
func stepSource(sc scenarios.Scenario, known bool, step string) string {
	if !known {
		return ""
	}
	if step == scenarios.SettleStep && sc.Settle != nil {
		return payloadSource(scenarios.Step{Payload: sc.Settle.Payload})
	}
	for _, st := range sc.Steps {
		if st.Name == step || step == st.Name+"-again" {
			return payloadSource(st)
		}
	}
	return ""
}
