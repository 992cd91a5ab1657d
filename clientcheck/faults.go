package clientcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// DefaultFaultSpec is the schedule when none is given: one operation's first response is
// held past the client's timeout, the others are reset after the commit or get a 503
// after the commit, in turn. Every fault lands AFTER the upstream committed, so a client
// that gives up instead of retrying with the same key is seen.
const DefaultFaultSpec = "hold=3s,reset,503"

// Fault spec items. Each is a fault KIND; the kinds are dealt over the logical
// operations (see Schedule) and act on the FIRST attempt of each key:
//
//	hold[=DUR]   after-hold then drop (default 3s: longer than the client's timeout); one operation only
//	reset[=P]    after-reset (RST after the commit)
//	close[=P]    after-close (no bytes after the commit)
//	409[=SECS]   before-status: the profile's in-flight answer with Retry-After SECS (default 1; 0: none)
//	422          before-status: the profile's mismatch answer ("key used with another payload")
//	503|502|504  after-status with that status
//	restart      after-reset, and the code under test is killed and started again (see Restart)
//	kill         over stdio only: after-kill, the server killed right after it answered (the
//	             client sees its server exit, starts it again and must retry under the key)
//	none         no faults
//
// P (default 1) is the probability that an operation dealt reset or close gets it; the
// first operation dealt a kind always does, so every kind is seen. Or "@FILE": a JSON
// array of faultproxy rules, used as given (nothing is dealt).
var faultItems = []string{"hold", "reset", "close", "409", "422", "503", "502", "504", "restart", "kill", "none"}

// FaultKind is one item of a fault spec.
type FaultKind struct {
	Name string // hold, reset, close, 409, 422, 503, 502, 504, restart, kill
	// Param is the item's parameter as written ("" = the default).
	Param string
	// Probability that a later operation dealt this kind gets it (the first always does).
	Probability float64
	// Once: dealt to one operation only (hold: each one costs its whole duration).
	Once bool
	// RetryAfter is what the 409 sends, in seconds.
	RetryAfter int
	// Hold is the after-hold duration.
	Hold time.Duration
}

// String is the item as the spec writes it: "409=1", "reset", "hold=3s".
func (k FaultKind) String() string {
	if k.Param == "" {
		return k.Name
	}
	return k.Name + "=" + k.Param
}

// RuleName is the proxy rule that applies the kind; the journal names it.
func (k FaultKind) RuleName() string { return "client-check-" + k.Name }

// Schedule is a parsed --faults spec: fault kinds dealt over the operations, or proxy
// rules used as given. An empty schedule is "no faults".
type Schedule struct {
	Spec  string
	Kinds []FaultKind
	// Rules are used as given when the spec was "@FILE" (or Config.Faults was set).
	Rules []faultproxy.Rule
}

// String is the spec the schedule was parsed from.
func (s *Schedule) String() string {
	if s.Spec != "" {
		return s.Spec
	}
	if len(s.Kinds) == 0 && len(s.Rules) == 0 {
		return "none"
	}
	parts := make([]string, len(s.Kinds))
	for i, k := range s.Kinds {
		parts[i] = k.String()
	}
	if len(s.Rules) > 0 {
		return fmt.Sprintf("%d rule(s)", len(s.Rules))
	}
	return strings.Join(parts, ",")
}

// ParseSchedule parses a fault spec ("" = DefaultFaultSpec). Errors name the bad item
// and list the valid ones.
func ParseSchedule(spec string) (*Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = DefaultFaultSpec
	}
	if file, ok := strings.CutPrefix(spec, "@"); ok {
		rules, err := rulesFromFile(file)
		if err != nil {
			return nil, err
		}
		return &Schedule{Spec: spec, Rules: rules}, nil
	}
	byName := map[string]FaultKind{}
	for _, item := range strings.Split(spec, ",") {
		name, param, hasParam := strings.Cut(strings.TrimSpace(item), "=")
		kind, err := faultItem(name, param, hasParam)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %w", strings.TrimSpace(item), err)
		}
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("fault %q: given twice", name)
		}
		byName[name] = kind
	}
	if _, ok := byName["none"]; ok {
		if len(byName) > 1 {
			return nil, fmt.Errorf("fault \"none\" cannot be combined with other faults")
		}
		return &Schedule{Spec: "none"}, nil
	}
	s := &Schedule{Spec: spec}
	for _, name := range faultItems {
		if k, ok := byName[name]; ok {
			s.Kinds = append(s.Kinds, k)
		}
	}
	return s, nil
}

func faultItem(name, param string, hasParam bool) (FaultKind, error) {
	kind := FaultKind{Name: name, Param: param, Probability: 1}
	noParam := func() error {
		if hasParam {
			return fmt.Errorf("takes no parameter")
		}
		return nil
	}
	switch name {
	case "hold":
		kind.Hold, kind.Once = 3*time.Second, true
		if hasParam {
			d, err := time.ParseDuration(param)
			if err != nil || d <= 0 {
				return kind, fmt.Errorf("want a positive duration such as 3s")
			}
			kind.Hold = d
		}
	case "reset", "close":
		if hasParam {
			p, err := strconv.ParseFloat(param, 64)
			if err != nil || p <= 0 || p > 1 {
				return kind, fmt.Errorf("want a probability in (0,1], e.g. 0.5")
			}
			kind.Probability = p
		}
	case "409":
		kind.RetryAfter = 1
		if hasParam {
			secs, err := strconv.Atoi(param)
			if err != nil || secs < 0 {
				return kind, fmt.Errorf("want whole seconds of Retry-After, e.g. 409=1, or 409=0 for none (as an API that sends none: the client is then held to the 50 ms minimum backoff)")
			}
			// 0 sends no Retry-After (the proxy's 0 is "none").
			kind.RetryAfter = secs
		}
	case "422", "503", "502", "504", "restart", "kill", "none":
		return kind, noParam()
	default:
		return kind, fmt.Errorf("unknown fault; use %s, or @FILE with JSON rules", strings.Join(faultItems, ", "))
	}
	return kind, nil
}

// refusal is the before-status fault of a 409 or 422 kind: the profile's status, with
// the body the profile says the API sends (declared: as JSON or text, as the proxy
// sends it), else the problem+json default.
func refusal(status int, declared, problem string) faultproxy.FaultSpec {
	if declared != "" {
		return faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: status, Body: declared}
	}
	return faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: status, Body: problem, ContentType: "application/problem+json"}
}

// jsonRPCRefusal is the 409 or 422 kind against a JSON-RPC tool endpoint (the profile's
// operation is a JSON-RPC call) whose profile tells the class by a JSON-RPC error inside
// a 200, as an MCP server refuses: no expect status for the class, and an outcomes: rule
// of the class that allows status 200 and tests only JSON values for equality. The fault answers 200 with a JSON-RPC
// response built from that rule's values, its id the refused call's (jsonrpc_id: a
// client drops an answer with another id), so the client meets the refusal it would
// meet from the server. A rule with a retry hint (retry_after) gets retryAfter seconds
// written at its path, as the server would say when to come back (0: not written). ok is
// false for any other profile or rule.
func jsonRPCRefusal(p *profile.Profile, class outcome.Class, retryAfter int) (faultproxy.FaultSpec, bool) {
	call, err := profile.Render(p.Operation.Body, "x")
	if err != nil || (!p.IsMCP() && gjson.Get(call, "jsonrpc").String() != "2.0") || p.Outcomes == nil {
		return faultproxy.FaultSpec{}, false
	}
	// A declared status is how this API refuses (the body then comes with it, refusal),
	// and an API whose repeats wait refuses nothing.
	if (class == outcome.InFlight && (p.Expect.InFlight != 0 || p.Expect.InFlightWait)) || (class == outcome.Mismatch && p.Expect.Mismatch != 0) {
		return faultproxy.FaultSpec{}, false
	}
	for _, cr := range p.Outcomes.Classes {
		if cr.Class != class {
			continue
		}
		for _, rule := range cr.Rules {
			if body, ok := jsonRPCAnswer(rule, class, retryAfter); ok {
				return faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: http.StatusOK, Body: body, JSONRPCID: true}, true
			}
		}
	}
	return faultproxy.FaultSpec{}, false
}

// jsonRPCRefusalOK reports whether jsonRPCRefusal has an answer for the class.
func jsonRPCRefusalOK(p *profile.Profile, class outcome.Class) bool {
	_, ok := jsonRPCRefusal(p, class, 0)
	return ok
}

// jsonRPCAnswer is the JSON-RPC response a rule describes: each of its values at its
// path, an error's required message where the rule names none, and retryAfter seconds
// at its retry hint's path, in the hint's unit.
func jsonRPCAnswer(rule outcome.Rule, class outcome.Class, retryAfter int) (string, bool) {
	if rule.Text != nil || len(rule.JSON) == 0 || (len(rule.Status) > 0 && !slices.Contains(rule.Status, http.StatusOK)) {
		return "", false
	}
	body := `{"jsonrpc":"2.0","id":null}`
	for _, pred := range rule.JSON {
		if !pred.IsEqual || pred.Path == "id" || strings.HasPrefix(pred.Path, "id.") {
			return "", false
		}
		var err error
		if body, err = sjson.Set(body, pred.Path, pred.Equals); err != nil {
			return "", false
		}
	}
	if e := gjson.Get(body, "error"); e.IsObject() && !e.Get("message").Exists() {
		body, _ = sjson.Set(body, "error.message", "idemproof client-check: an injected "+string(class)+" refusal")
	}
	if h := rule.RetryAfter; h != nil && retryAfter > 0 {
		var err error
		if body, err = sjson.Set(body, h.Path, int64(time.Duration(retryAfter)*time.Second/h.Unit)); err != nil {
			return "", false
		}
	}
	return body, gjson.Valid(body)
}

// Problem bodies the 409 and 422 faults send where the profile declares none (RFC 9457,
// like the reference server's).
const (
	inFlightBody = `{"type":"idempotency-key-in-use","title":"a request with this key is in flight"}`
	mismatchBody = `{"type":"idempotency-key-reused","title":"this key was used with another payload"}`
)

// rulesFor turns the schedule into proxy rules for the profile's operation, and refuses a
// kind that could never be seen as what it is: a 409 the profile does not classify as
// in_flight, a 422 it does not classify as mismatch. Rules given as such are checked too:
// one that could never match the operation, or that an earlier rule always shadows.
func (s *Schedule) rulesFor(p *profile.Profile) ([]faultproxy.Rule, error) {
	op := operationMatch(p)
	if s.Rules != nil {
		return s.Rules, checkGivenRules(s.Rules, p)
	}
	classifier := p.Classifier()
	var rules []faultproxy.Rule
	for _, k := range s.Kinds {
		r := faultproxy.Rule{Name: k.RuleName(), Match: op}
		r.Match.Headers = map[string]string{HeaderFault: k.Name}
		var want outcome.Class
		switch k.Name {
		case "hold":
			r.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: k.Hold, Then: "drop"}
			r.Count = 1
		case "reset", "restart":
			r.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}
		case "kill":
			if !p.IsStdio() {
				return nil, fmt.Errorf("fault %q: kills a stdio server right after it answered; the profile %s is not one (transport mcp-stdio): use reset, close, hold or 503 over HTTP", k, p.Name)
			}
			r.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterKill}
		case "close":
			r.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterClose}
		case "409":
			if f, ok := jsonRPCRefusal(p, outcome.InFlight, k.RetryAfter); ok {
				// No Retry-After header: a JSON-RPC client reads none from a 200, but the
				// body's retry hint, where the rule names one.
				r.Fault = f
				want = outcome.InFlight
				break
			}
			if p.Expect.InFlight == 0 {
				// Without the status, the fault would answer the proxy's default 503: a
				// server error every client may retry at once, judged as an in-flight
				// refusal.
				return nil, fmt.Errorf("fault %q: the profile %s declares no expect.in_flight status to answer with (its in-flight refusals are told by outcomes: rules or it waits, in_flight: wait), so the kind cannot stand in for them; drop it, or use @FILE rules with the answer this API gives", k, p.Name)
			}
			r.Fault = refusal(p.Expect.InFlight, p.Expect.InFlightBody, inFlightBody)
			r.Fault.RetryAfter = k.RetryAfter
			want = outcome.InFlight
		case "422":
			if f, ok := jsonRPCRefusal(p, outcome.Mismatch, 0); ok {
				r.Fault, want = f, outcome.Mismatch
				break
			}
			r.Fault = refusal(p.Expect.Mismatch, p.Expect.MismatchBody, mismatchBody)
			want = outcome.Mismatch
		default: // 503, 502, 504
			if p.IsStdio() {
				return nil, fmt.Errorf("fault %q: a stdio server's answer is a line, with no status to replace: over stdio use reset or close (the answer line lost), hold or kill", k)
			}
			status, _ := strconv.Atoi(k.Name)
			r.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: status}
			want = outcome.ServerError
		}
		if want != "" {
			ctype := r.Fault.ContentType
			if ctype == "" {
				ctype = "application/json" // what the proxy sends a JSON body as
			}
			a := outcome.Answer{Status: r.Fault.Status, Header: http.Header{"Content-Type": {ctype}}, Body: []byte(r.Fault.Body)}
			if r.Fault.RetryAfter > 0 {
				a.Header.Set("Retry-After", strconv.Itoa(r.Fault.RetryAfter))
			}
			if got := classifier.Classify(a); got != want {
				return nil, fmt.Errorf("fault %q: the profile %s classifies the answer it would send (status %d) as %s, not %s, so it could never be seen as one; drop it, or use @FILE rules with the answer this API gives",
					k, p.Name, a.Status, got, want)
			}
		}
		rules = append(rules, r)
		if k.Name != "restart" { // a restart resumes a pending key: a keyless attempt has none
			rules = append(rules, keylessTwin(r))
		}
	}
	return rules, nil
}

// keylessTwin is rule r for an operation's first attempt without a key, which the
// proxy cannot number (it counts attempts per key): the front marks it.
func keylessTwin(r faultproxy.Rule) faultproxy.Rule {
	r.Name += keylessSuffix
	r.Match.Attempts, r.Match.NoKey = nil, true
	r.Match.Headers = map[string]string{HeaderFault: r.Match.Headers[HeaderFault], HeaderFirstKeyless: "1"}
	return r
}

// keylessSuffix ends the name of a kind's rule for keyless first attempts.
const keylessSuffix = "-keyless"

// operationMatch selects the first attempt of each key of the profile's operation (and,
// in each kind's keyless twin, its first attempt without one). A path template matches
// any value where {{.Entity}} stands.
func operationMatch(p *profile.Profile) faultproxy.Match {
	if p.IsStdio() {
		// Over stdio a rule's path is the JSON-RPC method; a line has no HTTP method.
		return faultproxy.Match{Path: "tools/call", Attempts: &faultproxy.Range{From: 1, To: 1}}
	}
	return faultproxy.Match{Method: p.Operation.Method, Path: operationPathGlob(p), Attempts: &faultproxy.Range{From: 1, To: 1}}
}

// operationPathGlob is operation.path without its query, each {{...}} replaced by "*".
func operationPathGlob(p *profile.Profile) string {
	s, _, _ := strings.Cut(p.Operation.Path, "?")
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i] + "*")
		s = s[i+j+2:]
	}
	return b.String()
}

// checkGivenRules refuses rules that could never fire: one that cannot match the
// operation's method or path, one that asks for a key and for none at once, or one that
// an earlier rule with the same match, no count and no probability always wins over.
func checkGivenRules(rules []faultproxy.Rule, p *profile.Profile) error {
	glob := operationPathGlob(p)
	for i, r := range rules {
		m := r.Match
		switch {
		case m.Method != "" && !strings.EqualFold(m.Method, p.Operation.Method):
			return fmt.Errorf("rule %q: matches method %s, but the operation is %s %s: it could never fire", r.Name, m.Method, p.Operation.Method, p.Operation.Path)
		case m.Path != "" && !strings.Contains(glob, "*") && !pathMatches(m.Path, glob):
			return fmt.Errorf("rule %q: path %q does not match the operation's path %s: it could never fire", r.Name, m.Path, glob)
		case m.NoKey && (m.Key != "" || m.Attempts != nil):
			return fmt.Errorf("rule %q: no_key with key or attempts matches nothing: it could never fire", r.Name)
		}
		for _, earlier := range rules[:i] {
			unlimited := earlier.Count == 0 && (earlier.Probability == 0 || earlier.Probability == 1)
			if unlimited && reflect.DeepEqual(earlier.Match, r.Match) {
				return fmt.Errorf("rule %q: rule %q has the same match and always fires first: it could never fire", r.Name, earlier.Name)
			}
		}
	}
	return nil
}

func pathMatches(pattern, p string) bool {
	ok, _ := path.Match(pattern, p)
	return ok
}

func rulesFromFile(file string) ([]faultproxy.Rule, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read faults file: %w", err)
	}
	var rules []faultproxy.Rule
	if err := json.Unmarshal(b, &rules); err != nil {
		return nil, fmt.Errorf("faults file %s: want a JSON array of rules: %w", file, err)
	}
	if rules == nil {
		rules = []faultproxy.Rule{}
	}
	return rules, nil
}
