package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/verdict"
)

// The vendor lane: the calls the target made to its own vendor (profile downstream:),
// as the downstream sink recorded them after the scenario's settle step. The sequence
// diagram grows a fourth lane (client → proxy → target → vendor); the text timeline a
// table.

// Geometry of the vendor lane.
const (
	laneVendor     = 1010
	svgVendorWidth = 1100
)

// vendorKeyText is a call's downstream key, shortened, or "no key".
func vendorKeyText(c downstream.Call) string {
	if !c.HasKey || c.Key == "" {
		return "no key"
	}
	return "key " + shorten(c.Key, 28)
}

// vendorAnswerText is what the sink did with a call, and whether its caller had left.
func vendorAnswerText(c downstream.Call) string {
	if c.CallerLeft {
		return answerText(c) + ", caller gone before the answer"
	}
	return answerText(c)
}

func answerText(c downstream.Call) string {
	switch c.Answer {
	case downstream.AnswerCommitted:
		return "201 done"
	case downstream.AnswerReplayed:
		return "200 repeat (no new effect)"
	case downstream.Answer503Before:
		return "503 (fault, not done)"
	case downstream.Answer503After:
		return "503 (fault, done)"
	case downstream.AnswerResetAfter:
		return "reset (fault, done)"
	}
	return string(c.Answer)
}

// drawVendor draws each vendor call as an arrow from the target's lane to the vendor's
// and its answer back, with the time since the first attempt.
func (b *svgBuilder) drawVendor(rec *verdict.Record, start time.Time) {
	b.y += 10
	l := downstream.LedgerOf(rec.Downstream)
	b.text((laneTarget+laneVendor)/2, b.y+4, "middle", "muted",
		fmt.Sprintf("vendor calls after settle: %d call(s), %d effect(s), %d key(s)", l.Calls, l.Effects, l.Keys()))
	b.y += 6
	for i, c := range rec.Downstream {
		if i == MaxTimelineRows {
			b.y += arrowStep
			b.note(laneVendor, fmt.Sprintf("… %d more calls in the JSON report", len(rec.Downstream)-i))
			break
		}
		b.y += arrowStep
		if !start.IsZero() && !c.Time.IsZero() {
			b.text(12, b.y+4, "start", "time", fmt.Sprintf("+%dms", c.Time.Sub(start).Milliseconds()))
		}
		b.arrow(laneTarget, laneVendor, fmt.Sprintf("#%d %s %s", c.Seq, c.Method, shorten(c.Path, 20)), colRequest, false)
		b.text((laneTarget+laneVendor)/2, b.y+13, "middle", "notes", vendorKeyText(c))
		b.y += 12 + arrowStep
		colour := colOK
		switch c.Answer {
		case downstream.Answer503Before, downstream.Answer503After, downstream.AnswerResetAfter:
			colour = colServer
		}
		b.arrow(laneVendor, laneTarget, vendorAnswerText(c), colour, c.Answer == downstream.AnswerResetAfter)
		b.y += attemptGap
	}
}

// firstTime is the earliest time in the record (the first attempt), for relative times.
func firstTime(rec *verdict.Record) time.Time {
	var t time.Time
	for _, j := range rec.Journal {
		if !j.Time.IsZero() && (t.IsZero() || j.Time.Before(t)) {
			t = j.Time
		}
	}
	for _, op := range rec.History {
		if !op.Time.IsZero() && (t.IsZero() || op.Time.Before(t)) {
			t = op.Time
		}
	}
	return t
}

// writeVendorTimeline appends the vendor calls to a text timeline.
func writeVendorTimeline(b *strings.Builder, rec *verdict.Record) {
	if len(rec.Downstream) == 0 {
		return
	}
	start := firstTime(rec)
	l := downstream.LedgerOf(rec.Downstream)
	fmt.Fprintf(b, "  vendor calls (downstream sink, after settle): %d call(s), %d effect(s), %d key(s), %d without a key:\n", l.Calls, l.Effects, l.Keys(), l.Unkeyed)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    seq\tat\tmethod path\tkey\tvendor\t")
	for i, c := range rec.Downstream {
		if i == MaxTimelineRows {
			fmt.Fprintf(tw, "    …\t\t%d more calls\t\t\t\n", len(rec.Downstream)-i)
			break
		}
		at := "-"
		if !start.IsZero() && !c.Time.IsZero() {
			at = fmt.Sprintf("+%dms", c.Time.Sub(start).Milliseconds())
		}
		fmt.Fprintf(tw, "    %d\t%s\t%s %s\t%s\t%s\t\n", c.Seq, at, c.Method, shorten(c.Path, 40), vendorKeyText(c), vendorAnswerText(c))
	}
	tw.Flush()
}
