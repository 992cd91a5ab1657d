package storm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tidwall/sjson"
)

// Categories of a storm's findings (Jepsen's words, as the scenarios use them).
const (
	CatDuplicated = "duplicated" // more than one side effect for one operation's key
	CatLost       = "lost"       // a client saw success, the ledger shows no side effect though the target committed
	CatFabricated = "fabricated" // a client saw success, nothing was committed and the ledger is empty
	CatDiffers    = "differs"    // a replay that differs from the committed response
	CatFailed     = "failed"     // no copy got a success within its attempts (unknown outcome, or a refusal)
)

// Categories lists them in report order; the first four are safety findings.
var Categories = []string{CatDuplicated, CatLost, CatFabricated, CatDiffers, CatFailed}

// judge turns the operations' results into the report.
func (s *storm) judge(ops []opResult, planned int, elapsed time.Duration) *Report {
	rep := newReport(s.cfg, s.p, planned)
	rep.Done = len(ops)
	rep.ElapsedMS = millis(elapsed)
	lat := make([]time.Duration, 0, len(ops))
	for _, o := range ops {
		rep.Attempts += o.attempts
		rep.Faulted += o.faulted
		lat = append(lat, o.latency)
		rep.Latency.add(o.latency)
		for _, f := range s.findings(o) {
			rep.add(f, s.cfg.Listed)
			if len(s.found) < maxShrunk*4 && f.Category != CatFailed {
				s.found = append(s.found, o)
			}
		}
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		rep.P50MS, rep.P99MS = millis(lat[n/2]), millis(lat[(n*99)/100])
	}
	if elapsed > 0 {
		rep.Throughput = float64(len(ops)) / elapsed.Seconds()
	}
	return rep
}

// findings are what one operation broke.
func (s *storm) findings(o opResult) []Finding {
	base := Finding{Index: o.Index, Entity: o.Entity, Key: o.Key, Schedule: o.Schedule.String()}
	at := func(cat, format string, args ...any) Finding {
		f := base
		f.Category, f.Detail = cat, fmt.Sprintf(format, args...)
		return f
	}
	if o.buildErr != "" {
		return []Finding{at(CatFailed, "not sent: %s", o.buildErr)}
	}
	if o.ledgerErr != "" {
		return []Finding{at(CatFailed, "ledger unreadable: %s", o.ledgerErr)}
	}
	var successes []answer
	for _, a := range o.answers {
		if a.success() {
			successes = append(successes, a)
		}
	}
	var out []Finding
	allowed := 1
	if r := s.p.Retention.Std(); r > 0 && o.latency > r {
		// An operation that outlived the declared retention may execute once per window.
		allowed += int(o.latency / r)
	}
	switch n := o.ledger; {
	case n > allowed:
		out = append(out, at(CatDuplicated, "%d side effects for one key (%s); answers %s", n, o.Schedule, answersText(o.answers)))
	case n == 0 && len(successes) > 0 && o.upstreamSuccesses > 0:
		out = append(out, at(CatLost, "a client got %d, the target committed (%d upstream successes) and the ledger shows no side effect", successes[0].status, o.upstreamSuccesses))
	case n == 0 && len(successes) > 0:
		out = append(out, at(CatFabricated, "a client got %d while nothing was committed and the ledger is empty", successes[0].status))
	}
	if len(successes) == 0 {
		out = append(out, at(CatFailed, "no success in %d attempts: %s", o.attempts, answersText(o.answers)))
	} else if o.ledger <= 1 {
		want := successes[0].digest
		if o.committed != nil {
			want = *o.committed
		}
		for _, a := range successes {
			if a.digest != want {
				out = append(out, at(CatDiffers, "a replay differs from the committed response: got %d %s", a.status, a.excerpt))
				break
			}
		}
	}
	return out
}

func answersText(as []answer) string {
	var b bytes.Buffer
	for i, a := range as {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case a.err != "":
			b.WriteString("unknown (" + a.err + ")")
		case a.class != "":
			fmt.Fprintf(&b, "%d %s", a.status, a.class)
		default:
			fmt.Fprintf(&b, "%d", a.status)
		}
	}
	return b.String()
}

// canonicalBody is a body as a replay is compared: a JSON document without its volatile
// fields, re-encoded with its members sorted; anything else as it is.
func canonicalBody(body []byte, volatile []string) []byte {
	for _, f := range volatile {
		if out, err := sjson.DeleteBytes(body, f); err == nil {
			body = out
		}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
