package clientcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// The operation client-check watches: the reference server's keyed refund call.
const (
	OperationMethod = "POST"
	OperationPath   = "/v1/refunds"
)

// DefaultFaultSpec is the schedule when none is given: one key's first response is held
// past the client's timeout, some first attempts are reset after the commit, every
// other first attempt gets a 503 after the commit. Every fault lands AFTER the upstream
// committed, so a client that gives up instead of retrying with the same key is seen.
const DefaultFaultSpec = "hold=3s,reset=0.5,503"

// Fault spec items, each one rule on the FIRST attempt of a key (in this order of
// precedence, whatever the order written):
//
//	hold[=DUR]   after-hold then drop, for one key (default 3s: longer than the client's timeout)
//	reset[=P]    after-reset with probability P (default 0.5)
//	close[=P]    after-close with probability P (default 0.5)
//	409[=SECS]   before-status 409 with Retry-After SECS (default 1): "in flight, come back"
//	422          before-status 422: "this key was used with another payload"
//	503|502|504  after-status with that status, for every key the rules above left alone
//	none         no faults
//
// or "@FILE": a JSON array of faultproxy rules, used as given.
var faultItems = []string{"hold", "reset", "close", "409", "422", "503", "502", "504", "none"}

// ParseFaults turns a fault spec ("" = DefaultFaultSpec) into proxy rules. Errors name
// the bad item and list the valid ones.
func ParseFaults(spec string) ([]faultproxy.Rule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = DefaultFaultSpec
	}
	if file, ok := strings.CutPrefix(spec, "@"); ok {
		return rulesFromFile(file)
	}
	byName := map[string]faultproxy.Rule{}
	for _, item := range strings.Split(spec, ",") {
		name, param, hasParam := strings.Cut(strings.TrimSpace(item), "=")
		rule, err := faultItem(name, param, hasParam)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %w", item, err)
		}
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("fault %q: given twice", name)
		}
		byName[name] = rule
	}
	if _, ok := byName["none"]; ok {
		if len(byName) > 1 {
			return nil, fmt.Errorf("fault \"none\" cannot be combined with other faults")
		}
		return nil, nil
	}
	var rules []faultproxy.Rule
	for _, name := range faultItems {
		if r, ok := byName[name]; ok {
			rules = append(rules, r)
		}
	}
	return rules, nil
}

func faultItem(name, param string, hasParam bool) (faultproxy.Rule, error) {
	first := faultproxy.Match{Method: OperationMethod, Path: OperationPath, Attempts: &faultproxy.Range{From: 1, To: 1}}
	rule := faultproxy.Rule{Name: "client-check-" + name, Match: first}
	noParam := func() error {
		if hasParam {
			return fmt.Errorf("takes no parameter")
		}
		return nil
	}
	switch name {
	case "hold":
		d := 3 * time.Second
		if hasParam {
			var err error
			if d, err = time.ParseDuration(param); err != nil || d <= 0 {
				return rule, fmt.Errorf("want a positive duration such as 3s")
			}
		}
		rule.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: d, Then: "drop"}
		rule.Count = 1
	case "reset", "close":
		p, err := probability(param, hasParam)
		if err != nil {
			return rule, err
		}
		rule.Probability = p
		rule.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}
		if name == "close" {
			rule.Fault.Type = faultproxy.FaultAfterClose
		}
	case "409":
		secs := 1
		if hasParam {
			var err error
			if secs, err = strconv.Atoi(param); err != nil || secs < 0 {
				return rule, fmt.Errorf("want whole seconds of Retry-After, e.g. 409=1")
			}
		}
		rule.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 409, RetryAfter: secs,
			Body: `{"type":"idempotency-key-in-use","title":"a request with this key is in flight"}`}
	case "422":
		rule.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 422,
			Body: `{"type":"idempotency-key-reused","title":"this key was used with another payload"}`}
		return rule, noParam()
	case "503", "502", "504":
		status, _ := strconv.Atoi(name)
		rule.Fault = faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: status}
		return rule, noParam()
	case "none":
		return rule, noParam()
	default:
		return rule, fmt.Errorf("unknown fault; use %s, or @FILE with JSON rules", strings.Join(faultItems, ", "))
	}
	return rule, nil
}

func probability(param string, hasParam bool) (float64, error) {
	if !hasParam {
		return 0.5, nil
	}
	p, err := strconv.ParseFloat(param, 64)
	if err != nil || p <= 0 || p > 1 {
		return 0, fmt.Errorf("want a probability in (0,1], e.g. 0.5")
	}
	return p, nil
}

func rulesFromFile(path string) ([]faultproxy.Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read faults file: %w", err)
	}
	var rules []faultproxy.Rule
	if err := json.Unmarshal(b, &rules); err != nil {
		return nil, fmt.Errorf("faults file %s: want a JSON array of rules: %w", path, err)
	}
	return rules, nil
}

// retryAfterOf returns the Retry-After a rule's fault sends, by rule name.
func retryAfterOf(rules []faultproxy.Rule) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, r := range rules {
		if r.Fault.RetryAfter > 0 {
			out[r.Name] = time.Duration(r.Fault.RetryAfter) * time.Second
		}
	}
	return out
}
