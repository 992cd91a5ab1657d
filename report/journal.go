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

// payloadLabels names each distinct request payload P1, P2, … — only useful when a
// record holds more than one (a mismatch, a fingerprint variant) — and each MCP session
// S1, S2, … when attempts came in more than one (a retry in a new session). A payload is
// the request's body by its hash, or, for a JSON-RPC attempt whose client recorded it,
// the body without the attempt's own id (verdict.Op.PayloadSHA256): one tool call sent
// twice is one payload.
type payloadLabels struct {
	byPayload   map[string]string // payload identity → "P1"
	bySession   map[string]string // session id → "S1"
	sessionList []string          // session ids in first-use order
	rpc         rpcAttempts
}

// sessionHeader is the MCP session id request header (transport/mcp.HeaderSessionID).
const sessionHeader = "Mcp-Session-Id"

func newPayloadLabels(rec *verdict.Record, journal []faultproxy.Record) payloadLabels {
	p := payloadLabels{byPayload: map[string]string{}, bySession: map[string]string{}, rpc: newRPCAttempts(rec)}
	var payloads []string
	for _, j := range journal {
		id := p.identity(j)
		if _, ok := p.byPayload[id]; !ok {
			payloads = append(payloads, id)
			p.byPayload[id] = fmt.Sprintf("P%d", len(payloads))
		}
		if s := sessionOf(j); s != "" && p.bySession[s] == "" {
			p.sessionList = append(p.sessionList, s)
			p.bySession[s] = fmt.Sprintf("S%d", len(p.sessionList))
		}
	}
	if len(payloads) < 2 {
		p.byPayload = map[string]string{}
	}
	if len(p.sessionList) < 2 {
		p.bySession, p.sessionList = map[string]string{}, nil
	}
	return p
}

// identity is what makes two journaled requests the same payload.
func (p payloadLabels) identity(j faultproxy.Record) string {
	if op, ok := p.rpc.op(j); ok && op.PayloadSHA256 != "" {
		return op.PayloadSHA256
	}
	return j.BodySHA256
}

// of is the label of j's payload, "" when the record has one payload only.
func (p payloadLabels) of(j faultproxy.Record) string { return p.byPayload[p.identity(j)] }

func (p payloadLabels) any() bool { return len(p.byPayload) > 0 }

// session is the label of j's MCP session, "" when the record has one session or none.
func (p payloadLabels) session(j faultproxy.Record) string { return p.bySession[sessionOf(j)] }

// sessionLegend is "S1=3f2a…, S2=9c01…", "" with fewer than two sessions.
func (p payloadLabels) sessionLegend() string {
	parts := make([]string, len(p.sessionList))
	for i, s := range p.sessionList {
		parts[i] = p.bySession[s] + "=" + shorten(printable(s), 24)
	}
	return strings.Join(parts, ", ")
}

func sessionOf(j faultproxy.Record) string {
	for name, v := range j.Headers {
		if strings.EqualFold(name, sessionHeader) {
			return v
		}
	}
	return ""
}

// requestNotes is what distinguishes one attempt's request in a timeline: its payload
// label (when payloads differ), its MCP session (when sessions differ), the scenario
// step (the runner's X-Idemproof-Step header) and any test hook header (X-Test-…) the
// profile declared.
func requestNotes(j faultproxy.Record, payloads payloadLabels) string {
	var notes []string
	if p := payloads.of(j); p != "" {
		notes = append(notes, p)
	}
	if s := payloads.session(j); s != "" {
		notes = append(notes, "session "+s)
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
	if !payloads.any() {
		return nil
	}
	sc, known := scenarios.Lookup(scenarioID)
	stepsOf := map[string][]string{} // sha → steps, in first-use order
	var order []string
	for _, j := range journal {
		sha := payloads.identity(j)
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
		parts = append(parts, payloads.byPayload[sha]+"="+desc)
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
