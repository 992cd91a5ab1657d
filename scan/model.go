package scan

import (
	"strings"
	"time"

	"github.com/idemproof/idemproof/verdict"
)

// Kind is what a target is: the tools of an MCP server, or the operations of an OpenAPI
// document.
type Kind string

const (
	KindMCP     Kind = "mcp"
	KindOpenAPI Kind = "openapi"
)

// Target is what Enumerate found: the server or document and its operations, in the
// order the scan reports them (tools in tools/list order, operations by path and method).
type Target struct {
	Kind Kind `json:"kind"`
	// Source is what the command line named: the MCP endpoint, the stdio server's command
	// (as a shell would write it), or the OpenAPI file.
	Source string `json:"source"`
	// Endpoint is where calls go: the MCP endpoint URL, or the API's base URL; "" for a
	// stdio server.
	Endpoint string `json:"endpoint"`
	// Command is a stdio MCP server's command (argv), started for the scan, and Dir the
	// folder it ran in; nil for a server over HTTP.
	Command []string `json:"command,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	// Server names the server (its serverInfo) or the document (its info.title).
	Server string `json:"server,omitempty"`
	// Idempotency is true when the MCP server advertises capabilities.tools.idempotency
	// (SEP-3182) in its initialize answer: every tool then takes params.idempotencyKey.
	Idempotency bool `json:"tools_idempotency"`
	// Operations are in Report.Rows, one per row, in a report; here for a plan.
	Operations []*Operation `json:"operations,omitempty"`
	// Notes are what enumeration met besides the operations: a tool the SDK's client left
	// out of tools/list, a document that does not validate.
	Notes []string `json:"notes,omitempty"`
}

// Operation is one tool or one HTTP operation, with what enumeration learned of it and
// what the plan decided.
type Operation struct {
	// Name is the tool's name, the operation's operationId, or "METHOD /path".
	Name string `json:"name"`
	// Method and Path are an HTTP operation's (Path as the document writes it, with
	// {parameters}); empty for a tool.
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Description is the tool's description or the operation's summary.
	Description string `json:"description,omitempty"`
	// Annotations are a tool's hints as tools/list gave them; nil for none (and for HTTP).
	Annotations *Annotations `json:"annotations,omitempty"`
	// ReadOnly: readOnlyHint true (tools); Destructive: destructiveHint true (tools) or
	// DELETE (HTTP). Only what is declared counts: an unannotated tool is neither.
	ReadOnly    bool `json:"read_only,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
	// IdempotentClaim says how the operation declares itself idempotent ("idempotentHint:
	// true", "PUT (RFC 9110 §9.2.2)"); "" when it makes no such claim.
	IdempotentClaim string `json:"idempotent_claim,omitempty"`
	// Inputs are what the operation takes: a tool's arguments (its input schema's
	// properties), an HTTP operation's parameters and JSON body properties.
	Inputs []Input `json:"inputs,omitempty"`
	// Key is where the operation takes an idempotency key; nil: it takes none.
	Key *Key `json:"key,omitempty"`
	// Request is what one call sends, built from the schema or --args; nil when it could
	// not be built (Problem says why).
	Request *Request `json:"request,omitempty"`
	// Ledger counts the operation's executions, when --args declares one.
	Ledger *Ledger `json:"ledger,omitempty"`
	// Skip is why the plan does not probe the operation on purpose (read-only,
	// destructive, --exclude, --only); "" when it is probed or has a Problem.
	Skip string `json:"skip,omitempty"`
	// Problem is why the operation cannot be probed: arguments it needs, a schema it
	// cannot read, an --args entry in error. It names the operation's field.
	Problem string `json:"problem,omitempty"`

	src *source // the schema the arguments were built from
}

// Probed reports whether the plan probes the operation.
func (op *Operation) Probed() bool { return op.Skip == "" && op.Problem == "" && op.Request != nil }

// Input is one argument, parameter or body property an operation takes.
type Input struct {
	Name string `json:"name"`
	// In is "argument" (a tool's), "body", "path", "query", "header" or "cookie".
	In       string `json:"in"`
	Type     string `json:"type,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// String is "order_id: string, required".
func (i Input) String() string {
	s := i.Name
	if i.In != "argument" && i.In != "body" {
		s = i.In + " " + s
	}
	if i.Type != "" {
		s += ": " + i.Type
	}
	if i.Required {
		s += ", required"
	}
	return s
}

// Annotations are an MCP tool's behaviour hints (MCP specification, "Tool annotations").
type Annotations struct {
	ReadOnlyHint    bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Place is where a call carries its idempotency key.
type Place string

const (
	PlaceHeader   Place = "header"   // an HTTP header on the call
	PlaceArgument Place = "argument" // a tool argument, or a member of an HTTP JSON body
	PlaceMeta     Place = "meta"     // a member of the tools/call request's params._meta
	PlaceParams   Place = "params"   // params.idempotencyKey (SEP-3182)
)

// Key is where an operation takes its idempotency key, and why the scan thinks so.
type Key struct {
	Place Place  `json:"place"`
	Name  string `json:"name"` // the header, the argument or body member, the _meta member, "idempotencyKey"
	// Why says what told: "a header parameter of the document", "its name",
	// "the tool's description: …", "the server advertises tools.idempotency (SEP-3182)".
	Why string `json:"why"`
	// UUID: the key's schema says format uuid (every key sent is then a UUID anyway).
	UUID bool `json:"uuid,omitempty"`
}

// String is the key's place as a person reads it: "header Idempotency-Key", "argument
// idempotency_key", "_meta.idempotency_key", "params.idempotencyKey".
func (k *Key) String() string {
	switch k.Place {
	case PlaceHeader:
		return "header " + k.Name
	case PlaceArgument:
		return "argument " + k.Name
	case PlaceMeta:
		return "_meta." + k.Name
	}
	return "params." + k.Name
}

// Field is the key_field of a profile for this key (a dotted path into the JSON the
// call sends, its dots escaped), "" for a header: params.arguments.NAME,
// params._meta.NAME, params.idempotencyKey for a tool; NAME for an HTTP body member.
func (k *Key) Field(kind Kind) string {
	esc := strings.ReplaceAll(k.Name, ".", `\.`)
	switch {
	case k.Place == PlaceHeader:
		return ""
	case k.Place == PlaceArgument && kind == KindOpenAPI:
		return esc
	case k.Place == PlaceArgument:
		return "params.arguments." + esc
	case k.Place == PlaceMeta:
		return "params._meta." + esc
	}
	return "params." + esc
}

// Request is what one call of an operation sends besides its key: templates in which
// {{.Entity}} is filled with a fresh value per probe.
type Request struct {
	// Body is the tool's arguments (a JSON object) or the HTTP request's JSON body ("" for
	// none).
	Body string `json:"body,omitempty"`
	// Path is an HTTP call's path with its parameters filled and its query string.
	Path string `json:"path,omitempty"`
	// Header is what the operation's calls carry besides the scan's --header ones.
	Header map[string]string `json:"header,omitempty"`
	// Change is the one argument the changed-request probe changes; nil when there is
	// none to change.
	Change *Change `json:"change,omitempty"`
	// From says where the arguments came from: "the schema", "--args".
	From string `json:"from"`
}

// Change is the request with one argument changed.
type Change struct {
	Member string `json:"member"` // the argument or body member changed
	Body   string `json:"body"`   // the whole changed body (template)
	What   string `json:"what"`   // "amount 4900 → 4901"
}

// Ledger counts an operation's executions: an HTTP GET or a tool call, and a gjson path
// to the count in its answer. Templates see {{.Entity}}.
type Ledger struct {
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Method    string `json:"method,omitempty"`
	Path      string `json:"path,omitempty"`
	Count     string `json:"count"`
}

// String names the ledger in evidence: "list_refunds → result.structuredContent.count".
func (l *Ledger) String() string {
	if l.Tool != "" {
		return l.Tool + " → " + l.Count
	}
	m := l.Method
	if m == "" {
		m = "GET"
	}
	return m + " " + l.Path + " → " + l.Count
}

// Check is one column of the matrix.
type Check string

const (
	CheckKey        Check = "takes-a-key"
	CheckReplay     Check = "replays-after-lost-answer"
	CheckChanged    Check = "refuses-changed-request"
	CheckConcurrent Check = "one-of-two-concurrent"
	CheckAnnotation Check = "annotation-honest"
)

// Checks are the matrix's columns, in order.
var Checks = []Check{CheckKey, CheckReplay, CheckChanged, CheckConcurrent, CheckAnnotation}

// Title is the column's heading.
func (c Check) Title() string {
	switch c {
	case CheckKey:
		return "takes a key"
	case CheckReplay:
		return "replays after a lost answer"
	case CheckChanged:
		return "refuses a changed request"
	case CheckConcurrent:
		return "one of two concurrent copies"
	}
	return "annotation honest"
}

// Cell is one operation's verdict in one column, with one line of evidence.
type Cell struct {
	Check    Check           `json:"check"`
	Verdict  verdict.Verdict `json:"verdict"`
	Evidence string          `json:"evidence"`
}

// Row is one operation's line of the matrix.
type Row struct {
	Operation *Operation `json:"operation"`
	// Cells holds one cell per Checks entry, in order.
	Cells []Cell `json:"cells"`
	// PerExecution is the member of an answer found to differ between two executions
	// (the per-execution value the judgments read), "" when none was found.
	PerExecution string `json:"per_execution_value,omitempty"`
	// InFlight and Mismatch are the refusals the probes saw: a concurrent copy refused
	// while the other ran, the changed request refused (its control executed). A starter
	// profile's outcome rules name them.
	InFlight *Refusal `json:"in_flight,omitempty"`
	Mismatch *Refusal `json:"mismatch,omitempty"`
	// Calls is how many calls the probes made; Duration how long they took.
	Calls      int           `json:"calls"`
	Duration   time.Duration `json:"-"`
	DurationMS float64       `json:"duration_ms"`
}

// Refusal is an answer that refused a call: its HTTP status, and over MCP its JSON-RPC
// error code.
type Refusal struct {
	Status int    `json:"status"`
	Code   *int64 `json:"code,omitempty"`
}

// Cell returns the row's cell of a check.
func (r Row) Cell(c Check) Cell {
	for i, cc := range Checks {
		if cc == c && i < len(r.Cells) {
			return r.Cells[i]
		}
	}
	return Cell{}
}

// SafeToRetry reports whether the row shows the operation safe to retry after a lost
// answer: probed, its replay PASSed, and no cell FAILed.
func (r Row) SafeToRetry() bool {
	if !r.Operation.Probed() || r.Cell(CheckReplay).Verdict != verdict.Pass {
		return false
	}
	for _, c := range r.Cells {
		if c.Verdict == verdict.Fail {
			return false
		}
	}
	return true
}

// Report is a whole scan: the target, every row, and the headline.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"` // "idemproof <version>"
	Target        *Target   `json:"target"`
	Seed          int64     `json:"seed"`
	Started       time.Time `json:"started"`
	DurationMS    float64   `json:"duration_ms"`
	Rows          []Row     `json:"rows"`
	Headline      Headline  `json:"headline"`
	// Interrupted says why the scan stopped before every probe ran; "" when it did not.
	Interrupted string `json:"interrupted,omitempty"`
}

// ReportSchemaVersion is the version of report.json's schema for a scan.
const ReportSchemaVersion = 1
