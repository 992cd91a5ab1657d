package profile

import (
	"time"
)

// Profile describes one target API to the harness (docs/profiles.md). Nothing
// else about a target is hard-coded. Parsing, validation (errors that name the field and
// line) and ${ENV} expansion live beside it.
type Profile struct {
	Name    string `yaml:"name" json:"name"`
	BaseURL string `yaml:"base_url" json:"base_url"`
	// Transport is how attempts are spoken: "http" (default) or "mcp" (MCP Streamable
	// HTTP: sessions, JSON-RPC tools/call; docs/mcp.md). MCP tunes the MCP transport.
	Transport string      `yaml:"transport,omitempty" json:"transport,omitempty"`
	MCP       *MCPOptions `yaml:"mcp,omitempty" json:"mcp,omitempty"`
	// Outcomes are the rules that classify answers (status and predicates on the body),
	// class by class in order of precedence; nil: the statuses of expect and the examples.
	Outcomes *Outcomes `yaml:"outcomes,omitempty" json:"outcomes,omitempty"`
	// The key travels in a header (KeyHeader) or in a JSON body field (KeyField, a dotted
	// path such as params.arguments.idempotency_key). Exactly one is set.
	KeyHeader   string              `yaml:"key_header,omitempty" json:"key_header,omitempty"`
	KeyField    string              `yaml:"key_field,omitempty" json:"key_field,omitempty"`
	Operation   Operation           `yaml:"operation" json:"operation"`
	SideEffects Probe               `yaml:"side_effects" json:"side_effects"`
	Other       *OtherOperation     `yaml:"other_operation,omitempty" json:"other_operation,omitempty"` // a second keyed endpoint (scope per endpoint)
	Expect      Expect              `yaml:"expect" json:"expect"`
	Retention   Duration            `yaml:"retention,omitempty" json:"retention,omitempty"`       // declared window; 0 = not declared (expiry N/A)
	LockTimeout Duration            `yaml:"lock_timeout,omitempty" json:"lock_timeout,omitempty"` // declared stale-lock takeover; 0 = not declared
	Slow        *TestHook           `yaml:"slow_operation,omitempty" json:"slow_operation,omitempty"`
	FailHook    *TestHook           `yaml:"fail_operation,omitempty" json:"fail_operation,omitempty"` // make the work fail with a 5xx after it started
	Crash       *CrashHook          `yaml:"crash,omitempty" json:"crash,omitempty"`
	Principals  []map[string]string `yaml:"principals,omitempty" json:"principals,omitempty"`             // header sets, one per principal; the first is the default
	Business    *Example            `yaml:"business_error,omitempty" json:"business_error,omitempty"`     // a request the work rejects (executed, stored)
	Validation  *Example            `yaml:"validation_error,omitempty" json:"validation_error,omitempty"` // a request rejected before execution (not stored)
	// KeyedMethods are the methods the key applies to (e.g. [POST]); a key on any other
	// method must change nothing. Empty = not declared (key/get-ignored N/A).
	KeyedMethods []string `yaml:"keyed_methods,omitempty" json:"keyed_methods,omitempty"`
	// TLS says how an https:// target is verified besides the system's CA roots
	// (tls.ca_file); nil: the system's roots only.
	TLS *TLSOptions `yaml:"tls,omitempty" json:"tls,omitempty"`
	// Proxy, when set, is an already running faultproxy in front of the target (e.g. in a
	// container); otherwise the runner starts one in-process in front of BaseURL.
	Proxy *ProxyRef `yaml:"proxy,omitempty" json:"proxy,omitempty"`
	// ClientTimeout bounds each attempt of the runner's client (default 2s); the hold
	// faults hold the response longer than this.
	ClientTimeout Duration `yaml:"client_timeout,omitempty" json:"client_timeout,omitempty"`
	// ClientPatience (client-check) is how long a client may wait for one attempt's
	// answer before it should give up and retry (default DefaultClientPatience): the hold
	// fault holds an answer this long, and a client that waits it all out has no
	// per-attempt timeout worth the name (client/attempt-timeout, SHOULD).
	ClientPatience Duration `yaml:"client_patience,omitempty" json:"client_patience,omitempty"`
	// RetryAfterCap (client-check) is the longest wait a client may cap a retry hint at
	// (Retry-After, Retry-After-Ms, a body hint) and still honour it: waiting at least the
	// hint or the cap, whichever is shorter, is honouring. 0: DefaultRetryAfterCap, and a
	// client may wait longer; declared, waiting longer than it is a finding too (a client
	// that honours an hour's Retry-After hangs its operation for an hour).
	RetryAfterCap Duration `yaml:"retry_after_cap,omitempty" json:"retry_after_cap,omitempty"`
	// Entity says where a request of the operation names its logical operation (the
	// order, the payment), so that client-check can group a client's attempts without its
	// cooperation. nil: client-check infers it from operation.body (see EntityRef).
	Entity *EntityRef `yaml:"entity,omitempty" json:"entity,omitempty"`
	// EntitySetup creates each scenario's entity (an order, a charge) with a request of
	// its own, for operations that need a parent that exists; see entity_setup.go (its fields and their checks).
	EntitySetup *EntitySetup `yaml:"entity_setup,omitempty" json:"entity_setup,omitempty"`
	// Downstream is the vendor the target calls, observed by a recording sink (the
	// boundary scenarios need it); see downstream.go.
	Downstream *Downstream `yaml:"downstream,omitempty" json:"downstream,omitempty"`
	// Store is the target's key store connection, behind a store fault point (the
	// store/* scenarios and the storm's store outages need it); see store.go.
	Store *Store `yaml:"store,omitempty" json:"store,omitempty"`
	// Source is how a command line names this profile: its file path, or the built-in
	// profile's name. Load and Builtin set it; a document never does.
	Source string `yaml:"-" json:"-"`
}

// Operation is the keyed, side-effecting call. Body templates see {{.Entity}}.
type Operation struct {
	Method      string            `yaml:"method" json:"method"`
	Tool        string            `yaml:"tool,omitempty" json:"tool,omitempty"` // transport mcp: the tools/call name; body is its arguments
	Path        string            `yaml:"path" json:"path"`
	Headers     map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	Body        string            `yaml:"body" json:"body"`
	AlteredBody string            `yaml:"altered_body" json:"altered_body"` // same entity, another payload
}

// OtherOperation is a second keyed operation with its own ledger.
type OtherOperation struct {
	Operation   `yaml:",inline" json:",inline"`
	SideEffects Probe `yaml:"side_effects" json:"side_effects"`
}

// Probe reads the ledger: how many times did the operation happen for the entity?
type Probe struct {
	// Tool (transport mcp) reads the ledger with a tools/call of this tool with Arguments
	// (a JSON object template) instead of an HTTP GET; Path defaults to operation.path.
	Tool      string `yaml:"tool,omitempty" json:"tool,omitempty"`
	Arguments string `yaml:"arguments,omitempty" json:"arguments,omitempty"`

	Method string `yaml:"method" json:"method"`
	Path   string `yaml:"path" json:"path"`
	// Body (HTTP, a method other than GET or HEAD) is the read's request body, a
	// template with {{.Entity}}: a JSON-RPC server's counting method, a search query.
	Body    string            `yaml:"body,omitempty" json:"body,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	Count   string            `yaml:"count" json:"count"` // JSON path into the response: "count", "data.#" (length)
	// Scope is "entity" (default: the path names {{.Entity}} and counts its effects only)
	// or "global" (one count of every effect, read before and after each scenario).
	Scope string `yaml:"scope,omitempty" json:"scope,omitempty"`
}

// Expect declares the target's choices where the references disagree (docs/profiles.md,
// "Declared policies").
type Expect struct {
	// InFlight is the status of a repeat refused while the original runs (409). In YAML,
	// `in_flight: wait` declares the block-and-replay school instead: InFlight is then 0
	// and InFlightWait true.
	InFlight int `yaml:"in_flight" json:"in_flight"`
	// InFlightWait: a repeat during the original waits for it and receives its committed
	// response; never a refusal, never a second effect.
	InFlightWait bool   `yaml:"-" json:"in_flight_wait,omitempty"`
	Mismatch     int    `yaml:"mismatch" json:"mismatch"`                               // 422 (Stripe-style: 400)
	MissingKey   string `yaml:"missing_key" json:"missing_key"`                         // "400" or "optional"
	ReplayHeader string `yaml:"replay_header,omitempty" json:"replay_header,omitempty"` // e.g. Idempotent-Replayed; "" = none declared
	// MaxKeyLength is the longest key the API accepts (AWS's ClientToken: 64); 0 is
	// Stripe's 255. The long-key scenarios send keys of this length, and one longer.
	MaxKeyLength int `yaml:"max_key_length,omitempty" json:"max_key_length,omitempty"`
	// KeyFormat is the form of every key the runner sends: "" or KeyFormatFreeForm (keys
	// such as idemproof-<nonce>-007, and the key/* scenarios' other shapes) or
	// KeyFormatUUID (every key a lower-case RFC 9562 UUID, for targets that accept
	// nothing else; the scenarios whose premise is another key shape are N/A).
	KeyFormat string `yaml:"key_format,omitempty" json:"key_format,omitempty"`
	// ReplayHeaders are response headers a replay must reproduce (allow-list).
	ReplayHeaders []string `yaml:"replay_headers,omitempty" json:"replay_headers,omitempty"`
	// StoresBusinessErrors: a business 4xx is replayed (true) or re-executed (false); nil = not declared.
	StoresBusinessErrors *bool `yaml:"stores_business_errors,omitempty" json:"stores_business_errors,omitempty"`
	// StoresValidationErrors: a request refused before execution is stored under its key
	// and replayed (true) or leaves the key unused (false, Stripe); nil = not declared.
	StoresValidationErrors *bool `yaml:"stores_validation_errors,omitempty" json:"stores_validation_errors,omitempty"`
	// Stores5xx: a 5xx produced after the work began is stored and replayed (true, Stripe
	// v1) or the retry executes again (false); nil = not declared (not storing is required).
	Stores5xx *bool `yaml:"stores_5xx,omitempty" json:"stores_5xx,omitempty"`
	// UniqueField is a JSON path (gjson syntax) into a response body to a value minted per
	// execution (a refund id, a decline id): equal values prove a replay, different ones
	// a new execution. "" = not declared (replays are told by their bytes and the ledger).
	UniqueField string `yaml:"unique_field,omitempty" json:"unique_field,omitempty"`
	// VolatileFields are JSON paths (gjson syntax) into a response body to members that
	// differ in every response, the replay's too (a request id, a served-at time): they
	// are left out when a replay is compared with the response it replays.
	VolatileFields []string `yaml:"volatile_fields,omitempty" json:"volatile_fields,omitempty"`
	// ReplayBody is how a replay's body must match the stored response: "bytes" (the
	// default: byte for byte) or "json" (the same JSON value; members may come back in
	// another order, re-serialized). Only replay/fidelity-body tells the two apart.
	ReplayBody string `yaml:"replay_body,omitempty" json:"replay_body,omitempty"`
	// ReplayStatus is the status a replay answers with where it differs from the
	// execution's (PayPal: a repeat gets 200 with the resource after the 201 that created
	// it); 0: a replay answers the committed status. A success of either status is then
	// the same response when the bodies are.
	ReplayStatus int `yaml:"replay_status,omitempty" json:"replay_status,omitempty"`
	// FingerprintIgnores are members of operation.body (dotted paths) the target leaves
	// out of its fingerprint on purpose (a client's trace id, a note): reuse with only
	// such a member changed may replay. fingerprint/each-member does not change them.
	FingerprintIgnores []string `yaml:"fingerprint_ignores,omitempty" json:"fingerprint_ignores,omitempty"`
	// InFlightBody and MismatchBody are the bodies the API answers its in-flight and
	// mismatch statuses with (Stripe's error objects), for client-check's 409 and 422
	// kinds, which stand in for the API's own answers: a client that decides by the body
	// (stripe-go retries anything but a Stripe error object) must meet what the API
	// sends. "": a problem+json body (RFC 9457).
	InFlightBody string `yaml:"in_flight_body,omitempty" json:"in_flight_body,omitempty"`
	MismatchBody string `yaml:"mismatch_body,omitempty" json:"mismatch_body,omitempty"`
	// DurableKeys: the key store keeps its keys across an outage or a restart of the
	// server (a store that loses them then is a FAIL of store/back-replays and, for a stdio
	// server the harness kills and starts again, of replay/after-restart; not INFO).
	DurableKeys bool `yaml:"durable_keys,omitempty" json:"durable_keys,omitempty"`
	// HonoursKey false declares an API that ignores idempotency keys (client-check):
	// every request executes, so a correctly keyed retry duplicates and the duplicates
	// are the API's; the client is judged on what it can do (no blind re-send after a
	// lost answer, unknown reported as unknown). nil or true: the key is honoured.
	HonoursKey *bool `yaml:"honours_key,omitempty" json:"honours_key,omitempty"`
}

// KeyHonoured reports whether the API honours idempotency keys (expect.honours_key not
// false).
func (e Expect) KeyHonoured() bool { return e.HonoursKey == nil || *e.HonoursKey }

// TestHook is how a request switches a test hook of the target on: a request header
// (header + value), query parameters added to the operation's path, a path that
// replaces it, or a member of the request's JSON body (field + value: a dotted path
// written like key_field; over MCP into the JSON-RPC request, e.g.
// params._meta.test_delay). The value, the query values and the path are templates that
// see {{.HoldMs}} (the hold in milliseconds), {{.Value}} and {{.Entity}}. Exactly one of
// header, query, path and field is set.
type TestHook struct {
	Header string            `yaml:"header,omitempty" json:"header,omitempty"`
	Value  string            `yaml:"value,omitempty" json:"value,omitempty"` // the header's or the field's value; slow_operation: the hold duration unless hold is set
	Query  map[string]string `yaml:"query,omitempty" json:"query,omitempty"`
	Path   string            `yaml:"path,omitempty" json:"path,omitempty"`
	Field  string            `yaml:"field,omitempty" json:"field,omitempty"` // a dotted path into the request's JSON body, set to value as a JSON string
	// ValueJSON: with field, the rendered value is put as the JSON value it spells (400,
	// true, {"ms": 400}), not as a string.
	ValueJSON bool `yaml:"value_json,omitempty" json:"value_json,omitempty"`
	// Hold is how long slow_operation holds the work (default: value read as a duration).
	Hold Duration `yaml:"hold,omitempty" json:"hold,omitempty"`
}

// CrashHook makes the target abandon a request at a point: after the key insert (before
// the work commits) or after the commit (before the response). The point's value is the
// header's (the field's) value in the header (field) form, {{.Value}} in a query or path
// form.
type CrashHook struct {
	Header      string            `yaml:"header,omitempty" json:"header,omitempty"`
	Query       map[string]string `yaml:"query,omitempty" json:"query,omitempty"`
	Path        string            `yaml:"path,omitempty" json:"path,omitempty"`
	Field       string            `yaml:"field,omitempty" json:"field,omitempty"`
	ValueJSON   bool              `yaml:"value_json,omitempty" json:"value_json,omitempty"` // as TestHook's
	AfterKey    string            `yaml:"after_key" json:"after_key"`                       // e.g. "after-key"
	AfterCommit string            `yaml:"after_commit" json:"after_commit"`                 // e.g. "after-commit"
}

// Example is a request body and the status the target answers it with.
type Example struct {
	Body   string `yaml:"body" json:"body"`
	Status int    `yaml:"status" json:"status"`
}

// ProxyRef points at a running faultproxy: its proxy URL and its admin URL.
type ProxyRef struct {
	URL        string `yaml:"url" json:"url"`
	Admin      string `yaml:"admin" json:"admin"`
	AdminToken string `yaml:"admin_token,omitempty" json:"admin_token,omitempty"`
}

// Duration is a time.Duration written as "2s" / "400ms" in YAML and JSON.
type Duration time.Duration
