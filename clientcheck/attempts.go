package clientcheck

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

// Attempt is one attempt of an operation in the per-attempt view: when it came, how long
// it took, its key, the fault it met and the answer the proxy delivered, with its class.
type Attempt struct {
	Seq      uint64        `json:"seq"`
	Time     time.Time     `json:"time"`
	Duration time.Duration `json:"-"`
	Key      string        `json:"key,omitempty"`
	HasKey   bool          `json:"has_key"`
	// Fault is the fault the proxy applied ("after-reset"), "" for none.
	Fault string `json:"fault,omitempty"`
	// Upstream is what the target did: its status, or "not reached".
	Upstream string `json:"upstream"`
	// Delivered is what the client got: a status, or how the answer was lost.
	Delivered  string        `json:"delivered"`
	Class      outcome.Class `json:"class"`
	RetryAfter time.Duration `json:"-"`
	// RetryFrom says what asked for RetryAfter: "Retry-After", "Retry-After-Ms",
	// "Retry-After (HTTP date)", or a body path.
	RetryFrom string `json:"-"`
	// NoRetry is the answer's request not to retry ("x-should-retry: false"), "" none.
	NoRetry string `json:"no_retry,omitempty"`
}

// AttemptsOf is the per-attempt view of one operation, in arrival order.
func AttemptsOf(o Observation, op string) []Attempt {
	a := analyse(&o)
	return a.attemptView(a.attempts[op])
}

func (a *analysis) attemptView(records []faultproxy.Record) []Attempt {
	out := make([]Attempt, 0, len(records))
	for _, r := range records {
		at := Attempt{
			Seq: r.Seq, Time: a.startOf(r), Duration: a.endOf(r).Sub(a.startOf(r)), Key: r.Key, HasKey: r.HasKey,
			Fault: r.Fault, Upstream: upstreamText(r), Delivered: deliveredText(r), Class: a.classOf(r),
		}
		at.RetryAfter, at.RetryFrom, _ = a.retryAfterOf(r)
		at.NoRetry = a.noRetryOf(r)
		out = append(out, at)
	}
	return out
}

// startOf and endOf are when an attempt arrived and when its answer ended (or the
// client gave up), as the front saw it; the journal's arrival time without one.
func (o *Observation) startOf(r faultproxy.Record) time.Time {
	if d, ok := o.Delivered[r.Seq]; ok && !d.Start.IsZero() {
		return d.Start
	}
	return r.Time
}

func (o *Observation) endOf(r faultproxy.Record) time.Time {
	if d, ok := o.Delivered[r.Seq]; ok && !d.End.IsZero() {
		return d.End
	}
	return r.Time.Add(time.Duration(r.UpstreamMillis * float64(time.Millisecond)))
}

// answeredOf is the earliest the client can have had an attempt's whole answer: when
// the front last handed its bytes on, else endOf. A wait after the answer is counted
// from here.
func (o *Observation) answeredOf(r faultproxy.Record) time.Time {
	if d, ok := o.Delivered[r.Seq]; ok && !d.Sent.IsZero() {
		return d.answered()
	}
	return o.endOf(r)
}

// answered is the earlier of Sent and End; End when nothing was sent.
func (d Delivered) answered() time.Time {
	if d.Sent.IsZero() || (!d.End.IsZero() && d.End.Before(d.Sent)) {
		return d.End
	}
	return d.Sent
}

func upstreamText(r faultproxy.Record) string {
	switch {
	case !r.ReachedUpstream:
		return "not reached"
	case r.UpstreamStatus != 0 && r.UpstreamCalls > 1:
		return fmt.Sprintf("%d ×%d", r.UpstreamStatus, r.UpstreamCalls)
	case r.UpstreamStatus != 0:
		return strconv.Itoa(r.UpstreamStatus)
	}
	return "reached"
}

func deliveredText(r faultproxy.Record) string {
	switch {
	case r.ClientResult == faultproxy.ClientDelivered && r.ClientStatus != 0:
		return strconv.Itoa(r.ClientStatus)
	case r.ClientStatus != 0:
		return fmt.Sprintf("%d %s", r.ClientStatus, r.ClientResult)
	case r.ClientResult != "":
		return r.ClientResult
	}
	return "?"
}

// maxTableRows bounds the rows one operation's table shows.
const maxTableRows = 30

// WriteAttempts prints the per-attempt view as an aligned table, times relative to the
// first attempt, keys as K1, K2, … with a legend:
//
//	#  at      took   key  fault        upstream  delivered  class
//	1  +0ms    3ms    K1   after-reset  201       reset      info
//	2  +212ms  2ms    K1   -            201       201        success
func WriteAttempts(w io.Writer, attempts []Attempt, indent string) {
	if len(attempts) == 0 {
		fmt.Fprintf(w, "%s(no attempt)\n", indent)
		return
	}
	labels, order := map[string]string{}, []string{}
	for _, at := range attempts {
		if _, ok := labels[at.Key]; at.HasKey && !ok {
			order = append(order, at.Key)
			labels[at.Key] = "K" + strconv.Itoa(len(order))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s#\tat\ttook\tkey\tfault\tupstream\tdelivered\tclass\n", indent)
	start := attempts[0].Time
	for i, at := range attempts {
		if i == maxTableRows {
			fmt.Fprintf(tw, "%s…\t%d more attempts\n", indent, len(attempts)-i)
			break
		}
		key := "-"
		if at.HasKey {
			key = labels[at.Key]
		}
		class := string(at.Class)
		if at.RetryAfter > 0 {
			class += fmt.Sprintf(" (%s %s)", at.RetryFrom, at.RetryAfter)
		}
		if at.NoRetry != "" {
			class += " (" + at.NoRetry + ")"
		}
		fmt.Fprintf(tw, "%s%d\t+%s\t%s\t%s\t%s\t%s\t%s\t%s\n", indent, i+1, roundDuration(at.Time.Sub(start)), roundDuration(at.Duration),
			key, orDash(at.Fault), at.Upstream, at.Delivered, class)
	}
	tw.Flush()
	if len(order) > 0 {
		parts := make([]string, len(order))
		for i, k := range order {
			parts[i] = labels[k] + "=" + shorten(k, 40)
		}
		fmt.Fprintf(w, "%skeys: %s\n", indent, strings.Join(parts, " "))
	}
}

// history is the per-attempt view as history events (invoke, then ok / fail / info with
// the class), so the report renderers show it beside the journal.
func (a *analysis) history(records []faultproxy.Record) []verdict.Op {
	var ops []verdict.Op
	for i, r := range records {
		d := a.Delivered[r.Seq]
		step := "attempt"
		if r.Fault != "" {
			step = "fault:" + r.Fault // the fault this attempt met, not merely its operation's kind
		}
		ops = append(ops, verdict.Op{Index: len(ops), Client: 1, Attempt: i + 1, Type: verdict.OpInvoke, Key: r.Key, Step: step, Time: a.startOf(r)})
		done := verdict.Op{Index: len(ops), Client: 1, Attempt: i + 1, Key: r.Key, Step: step, Time: a.endOf(r), Class: a.classOf(r)}
		switch {
		case done.Class == outcome.Success:
			done.Type = verdict.OpOK
		case done.Class.Refusal() || done.Class == outcome.BusinessError:
			done.Type = verdict.OpFail
		default:
			done.Type = verdict.OpInfo
		}
		if r.ClientResult == faultproxy.ClientDelivered || r.ClientResult == faultproxy.ClientError {
			done.Status, done.Body = r.ClientStatus, shortBody(d.Body)
		} else {
			done.Error = r.ClientResult
		}
		if ra, from, ok := a.retryAfterOf(r); ok && from == "Retry-After" {
			done.Headers = map[string]string{"Retry-After": strconv.Itoa(int(ra / time.Second))}
		}
		ops = append(ops, done)
	}
	return ops
}

func shortBody(b []byte) []byte {
	if len(b) > 512 {
		return b[:512]
	}
	return b
}

// record is an operation's evidence: its journal, its per-attempt history, its ledger.
func (a *analysis) record(op string, records []faultproxy.Record) *verdict.Record {
	rec := &verdict.Record{Journal: records, History: a.history(records), Entity: op, LedgerErr: a.LedgerErr}
	if n, ok := a.Ledger[op]; ok {
		rec.Ledger = map[string]int{verdict.LedgerOperation: n}
	}
	rec.Downstream = a.VendorCalls[op] // the reports draw them as the vendor lane
	return rec
}

// span is the time from an operation's first arrival to its last answer.
func (a *analysis) span(records []faultproxy.Record) time.Duration {
	if len(records) == 0 {
		return 0
	}
	first, last := a.startOf(records[0]), a.endOf(records[0])
	for _, r := range records {
		if s := a.startOf(r); s.Before(first) {
			first = s
		}
		if e := a.endOf(r); e.After(last) {
			last = e
		}
	}
	return last.Sub(first)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// roundDuration keeps durations short: 3ms, 1.21s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}
