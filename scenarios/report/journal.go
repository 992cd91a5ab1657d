package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
)

// arrivalOrder is the journal sorted by arrival time (then sequence number): the proxy
// numbers an attempt when it finishes, so concurrent attempts come out of order, and a
// sequence diagram must read top to bottom in time.
func arrivalOrder(rec *scenarios.Record) []faultproxy.Record {
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
