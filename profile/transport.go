package profile

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/mcp"
)

// MCPOptions tune the MCP transport.
type MCPOptions struct {
	// RequireIdempotencyCapability: the server must advertise capabilities.tools.idempotency
	// (SEP-3182) in its initialize result; the preflight and every session check it.
	RequireIdempotencyCapability bool `yaml:"require_idempotency_capability,omitempty" json:"require_idempotency_capability,omitempty"`
	// Session is "scenario" (default: one session per principal and scenario run, shared
	// by its attempts) or "attempt" (a new session for every attempt).
	Session string `yaml:"session,omitempty" json:"session,omitempty"`
	// ProtocolVersion asked for in initialize (default 2025-11-25).
	ProtocolVersion string `yaml:"protocol_version,omitempty" json:"protocol_version,omitempty"`

	// Transport mcp-stdio only (stdio.go): how to start the server.
	Command []string          `yaml:"command,omitempty" json:"command,omitempty"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	Dir     string            `yaml:"dir,omitempty" json:"dir,omitempty"`
	// StartTimeout bounds the server's start and its initialize answer (default 10s).
	// Whether its keys survive a restart is expect.durable_keys.
	StartTimeout Duration `yaml:"start_timeout,omitempty" json:"start_timeout,omitempty"`
}

// Transports a profile can name.
const (
	TransportHTTP     = "http"
	TransportMCP      = "mcp"
	TransportMCPStdio = "mcp-stdio"
)

// Session modes of the MCP transport (mcp.session).
const (
	SessionPerScenario = "scenario"
	SessionPerAttempt  = "attempt"
)

// Capabilities that depend on the transport.
const (
	// CapQueryString: the operation is a plain HTTP request, whose query string is part
	// of what the target may fingerprint.
	CapQueryString Capability = "query_string"
	// CapHTTPConnections: the runner chooses the connections plain HTTP requests travel
	// on (keep-alive steps).
	CapHTTPConnections Capability = "http_connections"
	// CapMCPSessions: attempts travel in MCP sessions, so a retry can come in another one.
	CapMCPSessions Capability = "mcp_sessions"
	// CapHTTPRefusals: a refusal is an HTTP response of its own (its status and content
	// type are the refusal), not an error object inside a protocol's answer.
	CapHTTPRefusals Capability = "http_refusals"
	// CapRetryHint: an in-flight refusal has a way to say when to retry: HTTP's
	// Retry-After header, or, where refusals are JSON-RPC errors inside the answer (over
	// MCP), a body field an in_flight rule's retry_after names.
	CapRetryHint Capability = "retry_hint"
)

// missingOverTransport answers Missing for the capabilities that depend on the transport
// (ok false: not one of them).
func (p *Profile) missingOverTransport(c Capability) (string, bool) {
	switch c {
	case CapMCPSessions, CapHTTPConnections, CapDirectRoute, CapPrincipals, CapRequestHeaders, CapServerRestart:
		if m, ok := p.missingOverStdio(c); ok {
			return m, true
		}
	}
	switch c {
	case CapQueryString:
		if p.IsMCP() {
			return "a query string that belongs to the request; transport mcp sends tools/call to one endpoint, whose query string is no part of the call", true
		}
		return "", true
	case CapHTTPRefusals:
		if p.IsMCP() {
			return "refusals that are HTTP responses of their own (their status, headers and content type: RFC 9457, Retry-After); over transport mcp a refusal is a JSON-RPC error object inside the answer, which an MCP client reads instead", true
		}
		return "", true
	case CapRetryHint:
		if p.IsMCP() && !p.declaresRetryHint(outcome.InFlight) {
			return "a way for the in-flight refusal to say when to retry: over transport mcp it is a JSON-RPC error inside the answer, with no Retry-After header of its own; if the error says it in its data, declare where with retry_after on the in_flight rule, e.g. {path: error.data.retry_after_ms, unit: ms}", true
		}
		return "", true
	case CapMCPSessions:
		if !p.IsMCP() {
			return "MCP sessions; a plain HTTP request belongs to none", true
		}
		return "", true
	case CapHTTPConnections:
		if p.IsMCP() {
			return "plain HTTP requests on connections the runner reuses; transport mcp sends each attempt inside its sessions", true
		}
		return "", true
	}
	return "", false
}

// DefaultMCPPath is the Streamable HTTP endpoint when operation.path is not given.
const DefaultMCPPath = "/mcp"

// IsMCP reports whether attempts are MCP tools/call requests, over Streamable HTTP or
// stdio.
func (p *Profile) IsMCP() bool {
	return p.Transport == TransportMCP || p.Transport == TransportMCPStdio
}

func (p *Profile) applyMCPDefaults() {
	if p.Operation.Path == "" {
		p.Operation.Path = DefaultMCPPath
	}
	if p.SideEffects.Tool != "" && p.SideEffects.Path == "" {
		p.SideEffects.Path = p.Operation.Path
	}
	if p.Other != nil {
		if p.Other.Path == "" {
			p.Other.Path = p.Operation.Path
		}
		if p.Other.SideEffects.Tool != "" && p.Other.SideEffects.Path == "" {
			p.Other.SideEffects.Path = p.Operation.Path
		}
	}
}

// transportFieldErrors completes the validation's errors: a status the outcome rules make
// unnecessary is not required (a JSON-RPC server refuses inside a 200), the rules' own
// problems are reported, and transport:, mcp: and the tool fields are checked.
func (p *Profile) transportFieldErrors(found []fieldError) []fieldError {
	var errs []fieldError
	for _, e := range found {
		recognised, unset := p.statusRecognisedByRules(e.Path)
		if recognised {
			continue
		}
		if unset {
			e.Msg += " (or recognise " + strings.TrimPrefix(strings.TrimSuffix(e.Path, ".status"), "expect.") + " with outcomes:)"
		}
		errs = append(errs, e)
	}
	if p.Outcomes != nil {
		errs = append(errs, p.Outcomes.problems...)
	}
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	switch p.Transport {
	case "", TransportHTTP:
		if p.MCP != nil {
			add("mcp", "only with transport: mcp or mcp-stdio")
		}
		if p.Operation.Tool != "" {
			add("operation.tool", "only with transport: mcp or mcp-stdio (a plain HTTP operation has a method and a path)")
		}
		if p.SideEffects.Tool != "" {
			add("side_effects.tool", "only with transport: mcp or mcp-stdio")
		}
		return errs
	case TransportMCP:
		errs = append(errs, p.onlyOverStdio()...)
	case TransportMCPStdio:
		errs = p.stdioFieldErrors(errs)
	default:
		add("transport", "must be http, mcp or mcp-stdio, got %q", p.Transport)
		return errs
	}
	if p.Operation.Tool == "" {
		add("operation.tool", "required with transport: mcp: the tool's name for tools/call (operation.body is its arguments)")
	}
	if p.Other != nil && p.Other.Tool == "" {
		add("other_operation.tool", "required with transport: mcp")
	}
	if p.MCP != nil && !p.IsStdio() {
		switch p.MCP.Session {
		case "", SessionPerScenario, SessionPerAttempt:
		default:
			add("mcp.session", "must be scenario or attempt, got %q", p.MCP.Session)
		}
	}
	return errs
}

// statusRecognisedByRules reports whether a status field left out (zero or empty) is
// needed no longer because the outcome rules recognise its class, and whether it was
// left out at all.
func (p *Profile) statusRecognisedByRules(path string) (recognised, unset bool) {
	var class outcome.Class
	switch path {
	case "expect.in_flight":
		class, unset = outcome.InFlight, p.Expect.InFlight == 0
	case "expect.mismatch":
		class, unset = outcome.Mismatch, p.Expect.Mismatch == 0
	case "expect.missing_key":
		class, unset = outcome.MissingKey, p.Expect.MissingKey == ""
	case "business_error.status":
		class, unset = outcome.BusinessError, p.Business != nil && p.Business.Status == 0
	case "validation_error.status":
		class, unset = outcome.ValidationError, p.Validation != nil && p.Validation.Status == 0
	default:
		return false, false
	}
	return unset && p.Outcomes.Covers(class), unset
}

// checkToolProbe checks a ledger read by tool call (transport mcp).
func checkToolProbe(path string, pr Probe) []fieldError {
	var errs []fieldError
	if !strings.HasPrefix(pr.Path, "/") {
		errs = append(errs, fieldError{Path: path + ".path", Msg: fmt.Sprintf("must start with / (the MCP endpoint), got %q", pr.Path)})
	}
	if msg := checkTemplate(pr.Arguments, true); msg != "" {
		errs = append(errs, fieldError{Path: path + ".arguments", Msg: "must be a JSON object of the ledger tool's arguments: " + msg})
	} else if !strings.Contains(pr.Arguments, "{{") {
		errs = append(errs, fieldError{Path: path + ".arguments", Msg: "must contain {{.Entity}}: the ledger is read per fresh entity"})
	}
	if pr.Count == "" {
		errs = append(errs, fieldError{Path: path + ".count", Msg: "required: a gjson path to the count in the JSON-RPC response, e.g. result.structuredContent.count"})
	}
	return errs
}

// NewTransport builds the profile's transport around the classifier; tc verifies an
// https:// target (nil: the system's roots).
func (p *Profile) NewTransport(cl outcome.Classifier, probe *http.Client, tc *tls.Config) transport.Transport {
	if p.IsStdio() {
		return p.NewStdioTransport(cl)
	}
	if !p.IsMCP() {
		return &transport.HTTP{Client: transport.NewAttemptClient(tc), Probe: probe, Classifier: cl}
	}
	t := &mcp.Transport{Tool: p.Operation.Tool, Client: transport.NewAttemptClient(tc), Probe: probe, Classifier: cl}
	if o := p.MCP; o != nil {
		t.ProtocolVersion = o.ProtocolVersion
		t.SessionPerAttempt = o.Session == SessionPerAttempt
		t.RequireIdempotency = o.RequireIdempotencyCapability
	}
	return t
}

// NewMCPTransport returns the MCP transport the runner uses for the profile (nil for a
// profile of another transport), to open a session with (Initialize,
// Session.AdvertisesIdempotency). A tls.ca_file that cannot be read (Validate says why)
// adds no roots: the target is then verified against the system's alone.
func (p *Profile) NewMCPTransport() *mcp.Transport {
	if p.Transport != TransportMCP {
		return nil
	}
	tc, _ := p.TLSClientConfig()
	t, _ := p.NewTransport(p.Classifier(), transport.NewProbeClient(10*time.Second, tc), tc).(*mcp.Transport)
	return t
}

// SessionHeader is what an MCP session's set-up requests carry: the operation's headers
// and the principal's, never a test hook, a step marker or the key.
func (p *Profile) SessionHeader(principal int) http.Header {
	h, err := p.RequestHeaders(p.Operation.Headers, principal, "")
	if err != nil {
		return http.Header{} // the profile's templates were checked when it loaded
	}
	return h
}
