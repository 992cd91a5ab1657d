package scenarios

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

const srcRFC9457 = "RFC 9457 (Problem Details for HTTP APIs)"

func errorScenarios() []Scenario {
	return []Scenario{{
		ID:          "errors/problem-json",
		Description: "the missing-key, in-flight and mismatch refusals are RFC 9457 problem details",
		Requirement: "the 400, 409 and 422 refusals are application/problem+json with a type or title",
		Source:      and(srcDraftErrors, srcRFC9457),
		Level:       verdict.LevelShould,
		Labels:      []string{"group:errors", "fault:before-upstream", "level:should"},
		Needs:       []profile.Capability{profile.CapSlow, profile.CapAlteredBody, profile.CapHTTPRefusals},
		// The repeat is delayed by the proxy for a quarter of the slow hook, so it arrives
		// while the original is executing (as in race/in-flight-409).
		Faults: []FaultOn{{Step: "repeat", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeDelay}, DurationOf: QuarterSlow}},
		Steps: []Step{
			{Name: "unkeyed", Key: KeyNone},
			{Name: "original", Hook: HookSlow, Background: true},
			{Name: "repeat"},
			{Name: "mismatch", Payload: PayloadAltered, Wait: WaitBackground},
		},
		Check: problemJSON,
	}}
}

// problemJSON inspects every refusal the steps provoked; a step that was not refused
// (a missing key declared optional, a repeat made to wait) has nothing to inspect.
func problemJSON(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	var f finding
	var good, bad, unseen, inBody []string
	for _, want := range []struct {
		step  string
		class outcome.Class
	}{{"unkeyed", outcome.MissingKey}, {"repeat", outcome.InFlight}, {"original", outcome.InFlight}, {"mismatch", outcome.Mismatch}} {
		// The original is inspected too: on a loaded machine the delayed repeat can still
		// reach the target first, and then it is the original that is refused in flight.
		a, ok := stepAnswer(r, want.step)
		if want.step == "original" && (!ok || !a.Class.Determinate()) {
			continue // the original is only a refusal to inspect when it was refused
		}
		if !ok || !a.Class.Determinate() {
			unseen = append(unseen, want.step)
			continue
		}
		if !a.Class.Refusal() {
			continue
		}
		if a.Status < 400 {
			// A refusal the profile's rules find inside a 2xx (a JSON-RPC error object)
			// is no HTTP error response: RFC 9457 does not speak of it.
			inBody = append(inBody, fmt.Sprintf("%s %d (%s)", want.step, a.Status, a.Class))
			continue
		}
		if why := notProblem(a); why != "" {
			bad = append(bad, fmt.Sprintf("%d (%s): %s", a.Status, want.step, why))
			f.example("%s got %d, Content-Type %q, body %s", want.step, a.Status, a.Headers["Content-Type"], clip(a.Body))
			continue
		}
		good = append(good, itoa(a.Status))
	}
	switch {
	case len(bad) > 0:
		return f.result(verdict.NonStrict, "refusals that are not RFC 9457 problem details: %s", strings.Join(bad, "; "))
	case len(good) == 0 && len(unseen) == 0 && len(inBody) > 0:
		return f.result(verdict.Info, "the refusals are successes by status that the profile's outcome rules recognise (%s): RFC 9457 is about HTTP error responses, none to inspect",
			strings.Join(inBody, ", "))
	case len(good) == 0 && len(unseen) > 0:
		return f.result(verdict.Unknown, "no refusal to inspect: the answer to %s was not seen (info)", strings.Join(unseen, ", "))
	case len(good) == 0:
		// Nothing was refused (a key declared optional, a repeat made to wait, no
		// fingerprint): the scenarios that expect those refusals judge that.
		return f.result(verdict.Info, "nothing was refused (unkeyed %s, in-flight repeat %s, other payload %s): no problem details to inspect",
			describeAnswer(r, "unkeyed"), describeAnswer(r, "repeat"), describeAnswer(r, "mismatch"))
	}
	return f.result(verdict.Pass, "the %s refusal(s) are application/problem+json with a type or title", strings.Join(good, ", "))
}

// notProblem says why an answer is not an RFC 9457 problem ("" when it is one).
func notProblem(a verdict.Op) string {
	ct := a.Headers["Content-Type"]
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/problem+json" {
		return fmt.Sprintf("Content-Type %q, want application/problem+json", ct)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(a.Body, &doc); err != nil {
		return "the body is not a JSON object"
	}
	for _, member := range []string{"type", "title"} {
		var s string
		if raw, ok := doc[member]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return ""
		}
	}
	return "no \"type\" or \"title\" member"
}

func describeAnswer(r verdict.Record, step string) string {
	a, ok := stepAnswer(r, step)
	if !ok {
		return "not answered"
	}
	return describe(a)
}

// retryAfterSyntax says why a Retry-After value is malformed ("" when it parses): RFC
// 9110 §10.2.3 allows delta-seconds (1*DIGIT) or an HTTP-date (any of the three formats
// a recipient must accept).
func retryAfterSyntax(v string) string {
	v = strings.TrimSpace(v)
	if v != "" && strings.Trim(v, "0123456789") == "" {
		return ""
	}
	if _, err := http.ParseTime(v); err == nil {
		return ""
	}
	return fmt.Sprintf("%q is neither delta-seconds nor an HTTP-date (RFC 9110 §10.2.3)", v)
}
