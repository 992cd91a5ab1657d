package report

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/verdict"
)

// Sequence diagram geometry, in SVG user units.
const (
	svgWidth    = 860
	laneClient  = 110
	laneProxy   = 430
	laneTarget  = 750
	svgTop      = 52 // below the lane heads
	arrowStep   = 24 // vertical distance between two arrows
	attemptGap  = 14 // extra space between two attempts
	headWidth   = 120
	headHeight  = 28
	labelOffset = 5
)

// Colours shared with the stylesheet (html.go), one per kind of arrow.
const (
	colRequest = "#37474f"
	colOK      = "#1b7f3b"
	colClient  = "#b26a00" // 4xx
	colServer  = "#c62828" // 5xx
	colLost    = "#c62828"
	colFault   = "#6a1b9a"
	colBlame   = "#d50000" // the attempt the checker blamed: it broke the rule
)

// svgBuilder accumulates the elements of one diagram; y grows as arrows are added.
type svgBuilder struct {
	id   string // unique per diagram: marker ids must not collide inside one HTML page
	body strings.Builder
	y    int
	// vendor adds the fourth lane: the target's calls to its vendor (vendor.go).
	vendor bool
}

// SequenceSVG draws a record's attempts as a sequence diagram: lanes client → proxy →
// upstream, one arrow per hop, the fault applied at the proxy, statuses on the arrows, and
// the ledger counts at the bottom. id must be unique within the page. The proxy journal is
// the ground truth; without one, the client history is drawn instead.
func SequenceSVG(id string, rec *verdict.Record) string {
	return sequenceSVG(id, rec, nil, "")
}

// ResultSVG is SequenceSVG for a result: the answer arrow of every attempt its checker
// blamed is red, with the expected answer below it ("✗ want 422 (mismatch)"), and the
// payload legend names the profile field each payload comes from.
func ResultSVG(id string, r verdict.Result) string {
	return sequenceSVG(id, r.Evidence.Record, r.Evidence.Blame, r.ScenarioID)
}

func sequenceSVG(id string, rec *verdict.Record, blames []verdict.Blame, scenarioID string) string {
	b := &svgBuilder{id: id, y: svgTop, vendor: rec != nil && len(rec.Downstream) > 0}
	m := newMarks(rec, blames)
	switch {
	case rec == nil || (len(rec.Journal) == 0 && len(rec.History) == 0):
		b.y += 10
		b.note(laneProxy, "no attempts recorded")
		b.y += arrowStep
	case len(rec.Journal) > 0:
		b.drawJournal(rec, m, scenarioID)
	default:
		b.drawHistory(rec, m)
	}
	if b.vendor {
		b.drawVendor(rec, firstTime(rec))
	}
	ledger := "ledger: (not probed)"
	if rec != nil {
		ledger = "ledger after the run: " + ledgerText(rec)
	}
	b.y += 6
	b.body.WriteString(fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="24" rx="4" class="ledger"/>`,
		laneTarget-200, b.y, 300))
	b.text(laneTarget-50, b.y+16, "middle", "ledger-text", ledger)
	b.y += 34
	return b.finish()
}

func (b *svgBuilder) drawJournal(rec *verdict.Record, m marks, scenarioID string) {
	keys := newKeyLabels(rec)
	journal := arrivalOrder(rec)
	payloads := newPayloadLabels(rec, journal)
	rpc := payloads.rpc
	var start time.Time
	for _, j := range journal {
		if !j.Time.IsZero() {
			start = j.Time
			break
		}
	}
	for i, j := range journal {
		if i == MaxTimelineRows {
			b.y += 6
			b.note(laneProxy, summariseRest(journal[i:]))
			b.y += arrowStep
			// The blamed attempts are drawn even past the limit: they are the point.
			for _, late := range journal[i:] {
				if bl, blamed := m.byJournal[late.Seq]; blamed {
					b.attempt(keys, payloads, rpc, late, start, bl, true)
					b.y += attemptGap
				}
			}
			break
		}
		bl, blamed := m.byJournal[j.Seq]
		b.attempt(keys, payloads, rpc, j, start, bl, blamed)
		b.y += attemptGap
		if i < len(journal)-1 && i < MaxTimelineRows-1 {
			b.body.WriteString(fmt.Sprintf(`<line x1="20" x2="%d" y1="%d" y2="%d" class="sep"/>`, svgWidth-20, b.y-attemptGap/2, b.y-attemptGap/2))
		}
	}
	if len(keys.order) > 0 {
		b.y += 4
		b.text(20, b.y+12, "start", "legend", "keys: "+keys.legend())
		b.y += 20
	}
	if legend := payloads.sessionLegend(); legend != "" {
		b.text(20, b.y+12, "start", "legend", "sessions: "+shorten(legend, 110))
		b.y += 16
	}
	for i, entry := range payloadLegend(journal, payloads, m, scenarioID) {
		head := "payloads: "
		if i > 0 {
			head = strings.Repeat(" ", len(head))
		}
		b.text(20, b.y+12, "start", "legend", head+shorten(entry, 110))
		b.y += 16
	}
}

// attempt draws one journal record: request in, the hops to the upstream if it was
// reached, the fault at the proxy, and what came back to the client.
func (b *svgBuilder) attempt(keys *keyLabels, payloads payloadLabels, rpc rpcAttempts, j faultproxy.Record, start time.Time, bl verdict.Blame, blamed bool) {
	b.y += arrowStep
	// Arrival time relative to the first attempt: attempts drawn one below the other may
	// still have overlapped (a concurrent pair, a burst).
	if !j.Time.IsZero() && !start.IsZero() {
		b.text(12, b.y+4, "start", "time", fmt.Sprintf("+%dms", j.Time.Sub(start).Milliseconds()))
	}
	req := fmt.Sprintf("#%d %s try %s  %s %s%s", j.Seq, keys.label(j.Key, j.HasKey), attemptText(j.Attempt), j.Method, shorten(j.Path, 34), rpc.request(j))
	b.arrow(laneClient, laneProxy, req, colRequest, false)
	if notes := requestNotes(j, payloads); notes != "" {
		b.text((laneClient+laneProxy)/2, b.y+13, "middle", "notes", notes)
		b.y += 12
	}
	// A before-fault (or a duplicate delivery) acts before the upstream hop; an
	// after-fault acts on the response, so its mark goes below the upstream's answer.
	afterFault := strings.HasPrefix(j.Fault, "after")
	// The box names the fault only: runner rule names are long per-key names.
	if j.Fault != "" && !afterFault {
		b.faultBox(j.Fault)
	}
	if j.ReachedUpstream {
		calls := j.UpstreamCalls
		if calls < 1 {
			calls = 1
		}
		for c := 1; c <= calls; c++ {
			b.y += arrowStep
			label := "forward"
			if calls > 1 {
				label = fmt.Sprintf("deliver %d of %d", c, calls)
			}
			b.arrow(laneProxy, laneTarget, label, colRequest, false)
			b.y += arrowStep
			st := "answered"
			if j.UpstreamStatus != 0 {
				st = fmt.Sprint(j.UpstreamStatus)
			}
			if c == calls && j.UpstreamMillis > 0 {
				st += fmt.Sprintf("  (%.0f ms)", j.UpstreamMillis)
			}
			b.arrow(laneTarget, laneProxy, st, statusColour(j.UpstreamStatus), false)
		}
	} else {
		b.text(laneTarget, b.y+4, "middle", "muted", "not reached")
	}
	if afterFault {
		b.faultBox(j.Fault)
	}
	b.y += arrowStep
	back := clientText(j) + "  " + meaningText(rpc.class(j), j.Outcome)
	lost := j.ClientResult != "" && j.ClientResult != faultproxy.ClientDelivered
	colour := statusColour(j.ClientStatus)
	if lost {
		colour = colLost
	}
	if blamed {
		colour = colBlame
		b.blamedBand(laneClient, laneProxy)
	}
	b.arrow(laneProxy, laneClient, back, colour, lost)
	if blamed {
		b.wantNote(bl)
	}
	if j.Note != "" {
		b.y += 16
		b.text(laneProxy, b.y, "middle", "muted", shorten(j.Note, 80))
	}
}

// drawHistory is the fallback without a proxy journal: the client's own view, one
// request arrow and one outcome arrow per completed attempt.
func (b *svgBuilder) drawHistory(rec *verdict.Record, m marks) {
	keys := newKeyLabels(rec)
	b.y += 6
	b.note(laneProxy, "no proxy journal: the client's view only")
	b.y += 8
	shown := 0
	for _, op := range rec.History {
		if op.Type == verdict.OpInvoke {
			continue
		}
		if shown == MaxTimelineRows {
			b.y += arrowStep
			b.note(laneProxy, "… more attempts in the JSON report")
			break
		}
		shown++
		b.y += arrowStep
		b.arrow(laneClient, laneTarget, fmt.Sprintf("%s %s attempt %d%s", orDash(op.Step), keys.label(op.Key, op.Key != ""), op.Attempt, rpcText(op.RPCMethod, op.RPCID)), colRequest, false)
		b.y += arrowStep
		res := opResult(op)
		colour := opColour(op)
		bl, blamed := m.byOp[op.Index]
		if blamed {
			colour = colBlame
			b.blamedBand(laneClient, laneTarget)
		}
		b.arrow(laneTarget, laneClient, shorten(meaningText(string(op.Class), string(op.Type))+"  "+res, 72), colour, op.Type == verdict.OpInfo && op.Status == 0)
		if blamed {
			b.wantNote(bl)
		}
		b.y += attemptGap
	}
	b.y += arrowStep
}

func statusColour(status int) string {
	switch {
	case status >= 500:
		return colServer
	case status >= 400:
		return colClient
	case status >= 200 && status < 300:
		return colOK
	}
	return colRequest
}

func opColour(op verdict.Op) string {
	switch op.Type {
	case verdict.OpOK:
		return colOK
	case verdict.OpFail:
		return colClient
	}
	return colLost
}

// arrow draws a horizontal arrow at b.y from x1 to x2 with its label above it; a lost
// response is dashed and ends in a cross instead of an arrow head.
func (b *svgBuilder) arrow(x1, x2 int, label, colour string, lost bool) {
	end := x2
	dash := ""
	marker := fmt.Sprintf(` marker-end="url(#%s-head-%s)"`, b.id, strings.TrimPrefix(colour, "#"))
	if lost {
		// A lost response stops short of the client: it never arrived.
		if x2 < x1 {
			end = x2 + (x1-x2)/3
		} else {
			end = x2 - (x2-x1)/3
		}
		dash = ` stroke-dasharray="6 4"`
		marker = ""
	}
	fmt.Fprintf(&b.body, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.6"%s%s/>`,
		x1, b.y, end, b.y, colour, dash, marker)
	if lost {
		fmt.Fprintf(&b.body, `<path d="M%d %d l8 8 M%d %d l-8 8" stroke="%s" stroke-width="2"/>`,
			end-4, b.y-4, end+4, b.y-4, colour)
	}
	mid := (x1 + end) / 2
	fmt.Fprintf(&b.body, `<text x="%d" y="%d" text-anchor="middle" fill="%s" class="label">%s</text>`,
		mid, b.y-labelOffset, colour, html.EscapeString(printable(label)))
}

// wantNote writes, below a blamed answer's arrow, what the rule expected instead.
func (b *svgBuilder) wantNote(bl verdict.Blame) {
	b.y += 16
	// Anchored at the client's lane and running right, across the proxy's: a long
	// expectation ("the committed 201, byte for byte") has room there.
	b.text(laneClient+8, b.y, "start", "want", shorten(wantMark(bl), 100))
}

// blamedBand tints the row of a blamed answer's arrow, from x1 to x2, so it stands out
// from the answers that kept the rule.
func (b *svgBuilder) blamedBand(x1, x2 int) {
	fmt.Fprintf(&b.body, `<rect x="%d" y="%d" width="%d" height="22" rx="3" class="blamed"/>`, x1-10, b.y-17, x2-x1+20)
}

// faultBox marks the fault the proxy applied, on the proxy's lifeline.
func (b *svgBuilder) faultBox(label string) {
	w := 8*len([]rune(label)) + 16
	if w < 90 {
		w = 90
	}
	y := b.y + 6
	fmt.Fprintf(&b.body, `<rect x="%d" y="%d" width="%d" height="18" rx="9" class="fault"/>`, laneProxy-w/2, y, w)
	b.text(laneProxy, y+13, "middle", "fault-text", "⚡ "+label)
	b.y += 20
}

func (b *svgBuilder) note(x int, s string) {
	b.text(x, b.y, "middle", "muted", s)
}

func (b *svgBuilder) text(x, y int, anchor, class, s string) {
	fmt.Fprintf(&b.body, `<text x="%d" y="%d" text-anchor="%s" class="%s">%s</text>`,
		x, y, anchor, class, html.EscapeString(printable(s)))
}

// finish wraps the body with the arrow markers, the lane heads and the lifelines now that
// the height is known.
func (b *svgBuilder) finish() string {
	h := b.y + 10
	width := svgWidth
	lanes := []struct {
		x    int
		name string
	}{{laneClient, "client"}, {laneProxy, "fault proxy"}, {laneTarget, "upstream"}}
	if b.vendor {
		width = svgVendorWidth
		lanes = append(lanes, struct {
			x    int
			name string
		}{laneVendor, "vendor (sink)"})
	}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" class="seq" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="attempt timeline">`,
		width, h, width, h)
	s.WriteString("<defs>")
	for _, c := range []string{colRequest, colOK, colClient, colServer, colFault, colBlame} {
		fmt.Fprintf(&s, `<marker id="%s-head-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="%s"/></marker>`,
			b.id, strings.TrimPrefix(c, "#"), c)
	}
	s.WriteString("</defs>")
	for _, lane := range lanes {
		fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="lifeline"/>`, lane.x, 10+headHeight, lane.x, h-6)
		fmt.Fprintf(&s, `<rect x="%d" y="10" width="%d" height="%d" rx="5" class="head"/>`, lane.x-headWidth/2, headWidth, headHeight)
		fmt.Fprintf(&s, `<text x="%d" y="29" text-anchor="middle" class="head-text">%s</text>`, lane.x, lane.name)
	}
	s.WriteString(b.body.String())
	s.WriteString("</svg>")
	return s.String()
}
