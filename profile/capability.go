package profile

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/jsonvalue"
)

// Capability is something a scenario needs the profile to declare; without it the
// scenario is N/A for that target.
type Capability string

const (
	CapKeyHeader        Capability = "key_header"      // the key travels in a header
	CapAlteredBody      Capability = "altered_body"    // operation.altered_body
	CapIntegerBody      Capability = "integer_in_body" // the body is JSON with an integer
	CapJSONBody         Capability = "json_body"       // the body is a JSON document
	CapSlow             Capability = "slow"            // slow_operation
	CapFail             Capability = "fail"            // fail_operation
	CapSlowFail         Capability = "slow_fail"       // slow_operation and fail_operation on one request
	CapCrashAfterKey    Capability = "crash_after_key" // crash.after_key
	CapCrashAfterCommit Capability = "crash_after_commit"
	CapRetention        Capability = "retention"         // a retention short enough to wait out
	CapLockTimeout      Capability = "lock_timeout"      // a declared stale-lock takeover
	CapPrincipals       Capability = "principals"        // at least two principals
	CapOther            Capability = "other_operation"   // a second keyed endpoint
	CapReplayHeader     Capability = "replay_header"     // expect.replay_header
	CapReplayHeaders    Capability = "replay_headers"    // expect.replay_headers
	CapBusiness         Capability = "business_error"    // business_error
	CapValidation       Capability = "validation_error"  // validation_error
	CapKeyedMethods     Capability = "keyed_methods"     // keyed_methods, with the ledger's method not among them
	CapDownstream       Capability = "downstream"        // downstream: a vendor the target calls, observed by a sink
	CapStore            Capability = "store"             // store: the target's key store behind a store fault point
	CapDirectRoute      Capability = "direct_route"      // base_url: a step may reach the target around the proxy
	CapEntityRequest    Capability = "entity_in_request" // operation.path or body names {{.Entity}}
	CapChangeableBody   Capability = "changeable_body"   // a JSON object or form body with a member to change
	// Keys the runner may shape freely (expect.key_format is not uuid). Under key_format
	// uuid every key is a UUID, so a scenario whose premise is another key is N/A.
	CapFreeFormKeys      Capability = "free_form_keys"      // keys of any shape: control characters, quotes, ULIDs, one character
	CapKeyLengthLimit    Capability = "key_length_limit"    // keys of any length up to the limit, and one over it
	CapCaseSensitiveKeys Capability = "case_sensitive_keys" // keys whose letter case is significant
	// CapInFlightRefusal: a repeat during the original is refused (expect.in_flight is a
	// status, not wait), so the refusal's headers can be judged.
	CapInFlightRefusal Capability = "in_flight_status"
	// CapRequestHeaders: a request can carry a header of the runner's choosing.
	CapRequestHeaders Capability = "request_headers"
	// CapServerRestart: the harness starts the server, and may kill it and start it
	// again (transport mcp-stdio).
	CapServerRestart Capability = "server_restart"
)

// MaxWaitedWindow is the longest retention or lock timeout the runner waits out; a target
// declaring 24h gets N/A for the expiry scenarios instead of a day-long run.
const MaxWaitedWindow = 30 * time.Second

// Missing returns why the profile lacks c, or "" when it has it.
func (p *Profile) Missing(c Capability) string {
	if m, ok := p.missingOverTransport(c); ok {
		return m
	}
	switch c {
	case CapKeyHeader:
		if p.KeyHeader == "" {
			return "the key travels in the body (key_field), not a header"
		}
	case CapAlteredBody:
		if p.Operation.AlteredBody == "" {
			return "operation.altered_body not declared"
		}
	case CapJSONBody, CapIntegerBody:
		v, err := jsonvalue.Parse(mustRender(p.Operation.Body))
		if err != nil || !v.IsObject {
			return "operation.body is not a JSON object"
		}
		respell := v.RespellPayloadIntegers // a JSON-RPC request's id is no payload
		if p.IsMCP() {
			respell = v.RespellIntegers // the body is only the tool's arguments
		}
		if c == CapIntegerBody && !respell() {
			if !p.IsMCP() && v.IsJSONRPCRequest() {
				return "operation.body has no integer to respell outside the JSON-RPC envelope (its id is not payload)"
			}
			return "operation.body has no integer to respell"
		}
	case CapChangeableBody:
		if len(p.ChangeableMembers()) == 0 {
			return "a body with a member to change: operation.body is a JSON object or a form (a=1&b=2) with a member that does not name the entity, carry the key or appear in expect.fingerprint_ignores"
		}
	case CapEntityRequest:
		if !p.EntityInRequest() {
			return "an operation that names its entity (operation.path or operation.body with {{.Entity}}); here a request for another entity is the same request"
		}
	case CapDirectRoute:
		if p.BaseURL == "" {
			return "base_url not declared (only proxy.url): a step meant to reach the target around the proxy would go through it, and test the proxy's own header spelling instead"
		}
	case CapDownstream:
		if p.Downstream == nil {
			return "downstream not declared (the vendor the target calls)"
		}
	case CapStore:
		if p.Store == nil {
			return "store not declared (the target's key store connection: store: {listen, upstream})"
		}
	case CapSlow:
		if p.Slow == nil {
			return "slow_operation not declared"
		}
	case CapFail:
		if p.FailHook == nil {
			return "fail_operation not declared"
		}
	case CapSlowFail:
		switch {
		case p.Slow == nil || p.FailHook == nil:
			// CapSlow and CapFail name what is missing.
		case p.Slow.Path != "" && p.FailHook.Path != "":
			return "slow_operation and fail_operation on one request (both replace the path)"
		case p.Slow.Header != "" && http.CanonicalHeaderKey(p.Slow.Header) == http.CanonicalHeaderKey(p.FailHook.Header):
			return "slow_operation and fail_operation on one request (both set " + p.Slow.Header + ")"
		case p.Slow.Field != "" && p.FailHook.Field != "" && fieldsOverlap(p.Slow.Field, p.FailHook.Field):
			if p.Slow.Field == p.FailHook.Field {
				return "slow_operation and fail_operation on one request (both set " + p.Slow.Field + " in the body)"
			}
			return "slow_operation and fail_operation on one request (" + p.Slow.Field + " and " + p.FailHook.Field + " overlap in the body)"
		}
	case CapCrashAfterKey:
		if p.Crash == nil || p.Crash.AfterKey == "" {
			return "crash.after_key not declared"
		}
	case CapCrashAfterCommit:
		if p.Crash == nil || p.Crash.AfterCommit == "" {
			return "crash.after_commit not declared"
		}
	case CapRetention:
		if p.Retention == 0 {
			return "retention not declared"
		}
		if p.Retention.Std() > MaxWaitedWindow {
			return fmt.Sprintf("retention %s is longer than the %s the runner waits out", p.Retention, MaxWaitedWindow)
		}
	case CapLockTimeout:
		if p.LockTimeout == 0 {
			return "lock_timeout not declared"
		}
		if p.LockTimeout.Std() > MaxWaitedWindow {
			return fmt.Sprintf("lock_timeout %s is longer than the %s the runner waits out", p.LockTimeout, MaxWaitedWindow)
		}
		// The retry after the lock timeout must still fall inside the retention, or a
		// wedged key would simply have expired and the scenario would prove nothing.
		if r := p.Retention.Std(); r > 0 && r < PastLock(p.LockTimeout.Std())+100*time.Millisecond {
			return fmt.Sprintf("retention %s does not outlast lock_timeout %s plus the takeover margin: a wedged key would expire before it could be seen", p.Retention, p.LockTimeout)
		}
	case CapPrincipals:
		if len(p.Principals) < 2 {
			return fmt.Sprintf("two principals; the profile declares %d", len(p.Principals))
		}
	case CapInFlightRefusal:
		if p.Expect.InFlightWait {
			return "an in-flight refusal; the profile declares in_flight: wait (a repeat waits and is never refused, so there is no refusal to carry Retry-After)"
		}
	case CapOther:
		if p.Other == nil {
			return "other_operation not declared"
		}
	case CapReplayHeader:
		if p.Expect.ReplayHeader == "" {
			return "expect.replay_header not declared"
		}
	case CapReplayHeaders:
		if len(p.Expect.ReplayHeaders) == 0 {
			return "expect.replay_headers not declared"
		}
	case CapBusiness:
		if p.Business == nil {
			return "business_error not declared"
		}
	case CapValidation:
		if p.Validation == nil {
			return "validation_error not declared"
		}
	case CapFreeFormKeys:
		if p.UUIDKeys() {
			return "keys of other shapes than a UUID; the profile declares expect.key_format: uuid (the target accepts only UUIDs)"
		}
	case CapKeyLengthLimit:
		if p.UUIDKeys() {
			return "keys of other lengths than a UUID's 36 characters; the profile declares expect.key_format: uuid (every key is 36 characters, so there is no length limit to probe)"
		}
	case CapCaseSensitiveKeys:
		if p.UUIDKeys() {
			return "case-sensitive keys; the profile declares expect.key_format: uuid (RFC 9562: a UUID's letter case is not significant, so a target may fold it and two case variants are rightly one key)"
		}
	case CapKeyedMethods:
		return p.missingKeyedMethods()
	case CapRequestHeaders, CapServerRestart, CapMCPSessions, CapHTTPConnections:
		// missingOverTransport answered them.
	default:
		return "unknown capability " + string(c)
	}
	return ""
}

// MissingAll joins what the profile lacks for the scenario ("" when nothing).
func (p *Profile) MissingAll(needs []Capability) string {
	var out []string
	for _, c := range needs {
		if m := p.Missing(c); m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, "; ")
}

func mustRender(s string) string {
	out, _, err := RenderSample(s)
	if err != nil {
		return s
	}
	return out
}

// PastLock is how long after a step the runner sends the takeover: the lock timeout plus
// a margin for the target's clock and scheduling.
func PastLock(lock time.Duration) time.Duration { return lock + max(lock/4, 200*time.Millisecond) }
