package profile

import "slices"

// Declaration is what a profile declares to supply a Capability, for a reader choosing
// what to declare next: the field as a profile spells it and, in a few words, what it
// gives the run. A capability that is a fact of the target (its transport, the key
// shapes it accepts, the form of its body) — described by a profile, not added to it —
// has no Field, and What says which fact.
type Declaration struct {
	Field string // "slow_operation"; "" for a fact of the target
	What  string // "a way to hold the work in flight"
}

// declarations maps every Capability to the declaration that supplies it, or to the
// fact of the target it is. Every Capability has an entry (a test holds it), so the
// "what to declare next" list stays true as capabilities are added.
var declarations = map[Capability]Declaration{
	CapAlteredBody:      {"operation.altered_body", "another payload for the same operation"},
	CapSlow:             {"slow_operation", "a way to hold the work in flight"},
	CapFail:             {"fail_operation", "a way to make the work fail with a 5xx"},
	CapSlowFail:         {"fail_operation in another header, path or field than slow_operation", "one request both held and failed"},
	CapCrashAfterKey:    {"crash.after_key", "a crash after the key is recorded"},
	CapCrashAfterCommit: {"crash.after_commit", "a crash after the commit"},
	CapRetention:        {"retention", "the key window, 30 s or less on the test deployment"},
	CapLockTimeout:      {"lock_timeout", "when a held key's lock goes stale, 30 s or less"},
	CapPrincipals:       {"principals", "a second principal (user, tenant)"},
	CapOther:            {"other_operation", "a second keyed operation"},
	CapReplayHeader:     {"expect.replay_header", "the header that marks a replay"},
	CapReplayHeaders:    {"expect.replay_headers", "the response headers a replay repeats"},
	CapBusiness:         {"business_error", "a request the API refuses after its checks"},
	CapValidation:       {"validation_error", "a request refused before any work"},
	CapKeyedMethods:     {"keyed_methods", "the methods the key applies to, the ledger's not among them"},
	CapDownstream:       {"downstream", "the vendor the target calls, observed by a sink"},
	CapDirectRoute:      {"base_url", "the target's own address, beside proxy.url"},
	CapEntityRequest:    {"{{.Entity}} in operation.path or operation.body", "requests that name their entity"},
	CapRetryHint:        {"retry_after on the in_flight outcome rule", "where the in-flight refusal says when to retry"},
	CapStore:            {"store", "the target's key store connection, behind a store fault point"},

	CapKeyHeader:         {What: "the key travels in the body (key_field), not a header"},
	CapJSONBody:          {What: "the body is not a JSON object"},
	CapIntegerBody:       {What: "the body has no integer to respell"},
	CapChangeableBody:    {What: "the body has no member to change"},
	CapFreeFormKeys:      {What: "the target accepts only UUID keys (expect.key_format: uuid)"},
	CapKeyLengthLimit:    {What: "the target accepts only UUID keys (expect.key_format: uuid)"},
	CapCaseSensitiveKeys: {What: "the target accepts only UUID keys (expect.key_format: uuid)"},
	CapInFlightRefusal:   {What: "a repeat in flight waits (in_flight: wait), never refused"},
	CapQueryString:       {What: "transport mcp: a tool call has no query string"},
	CapHTTPConnections:   {What: "transport mcp: attempts travel in sessions"},
	CapMCPSessions:       {What: "plain HTTP: requests belong to no session"},
	CapHTTPRefusals:      {What: "transport mcp: refusals are JSON-RPC errors inside the answer"},
	CapRequestHeaders:    {What: "transport mcp-stdio: a request is a line, with no headers"},
	CapServerRestart:     {What: "a server idemproof starts and may kill: transport mcp-stdio"},
}

// DeclarationFor is the declaration that supplies c, or the fact of the target c is
// (Field ""); ok is false for an unknown capability.
func DeclarationFor(c Capability) (d Declaration, ok bool) {
	d, ok = declarations[c]
	return d, ok
}

// DeclarationNamed is the declaration whose Field is field, for a report that carries
// only the field's name.
func DeclarationNamed(field string) (Declaration, bool) {
	for _, d := range declarations {
		if d.Field == field && field != "" {
			return d, true
		}
	}
	return Declaration{}, false
}

// Undeclared is, for a scenario needing needs, the fields to declare so that it is
// judged (DeclarationFor of each missing capability, each once, in needs' order): nil when
// the profile has every capability, and nil when one that is missing is no declaration
// (declaring the others would not judge it).
func (p *Profile) Undeclared(needs []Capability) []string {
	var out []string
	for _, c := range needs {
		if p.Missing(c) == "" {
			continue
		}
		d, _ := DeclarationFor(c)
		if d.Field == "" { // a fact of the target, or a capability without an entry
			return nil
		}
		if !slices.Contains(out, d.Field) {
			out = append(out, d.Field)
		}
	}
	return out
}
