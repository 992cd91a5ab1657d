package profile

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// Transport mcp-stdio: the target is an MCP server spoken to over its stdin and stdout,
// a process idemproof starts (docs/mcp.md, "stdio servers"):
//
//	transport: mcp-stdio
//	key_field: params._meta.idempotency_key
//	mcp:
//	  command: [go, run, ./cmd/refunds-stdio, -keys, /tmp/refund-keys.json]
//	  env: {REFUNDS_LOG: debug}     # added to idemproof's own environment
//	  dir: .                         # relative to the profile's folder (the default)
//	  start_timeout: 10s             # the start and the initialize answer
//	expect: {durable_keys: true}     # keys survive a restart of the server
//	operation: {tool: refund, body: '{"order_id": "{{.Entity}}", "amount": 4900}'}
//	side_effects: {tool: list_refunds, arguments: '{"order_id": "{{.Entity}}"}', count: result.structuredContent.count}
//
// Why a transport of its own rather than transport: mcp with a command: what a stdio
// server is not — a URL, an HTTP path, headers, a second principal, a session of its
// own per client — is then said once, by validation ("base_url: not with transport
// mcp-stdio: the server is a process") and by the scenarios' N/A reasons, instead of a
// profile whose HTTP fields silently mean nothing.

// DefaultStartTimeout bounds a stdio server's start and initialize answer.
const DefaultStartTimeout = mcpstdio.DefaultStartTimeout

// IsStdio reports whether the target is a stdio server (transport mcp-stdio).
func (p *Profile) IsStdio() bool { return p.Transport == TransportMCPStdio }

// StdioCommand is how to start the server: mcp.command, with mcp.env added to the
// environment, in mcp.dir.
func (p *Profile) StdioCommand() stdio.Command {
	if p.MCP == nil {
		return stdio.Command{}
	}
	c := stdio.Command{Args: append([]string(nil), p.MCP.Command...), Dir: p.MCP.Dir}
	names := make([]string, 0, len(p.MCP.Env))
	for k := range p.MCP.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		c.Env = append(c.Env, k+"="+p.MCP.Env[k])
	}
	return c
}

// StartTimeout is mcp.start_timeout (DefaultStartTimeout when unset).
func (p *Profile) StartTimeout() time.Duration {
	if p.MCP == nil || p.MCP.StartTimeout <= 0 {
		return DefaultStartTimeout
	}
	return p.MCP.StartTimeout.Std()
}

// DurableKeys reports expect.durable_keys: the server's keys survive an outage of its
// store, and a restart of the server.
func (p *Profile) DurableKeys() bool { return p.Expect.DurableKeys }

// NewStdioTransport is the transport to the profile's stdio server: it starts the
// server itself; the runner gives it a fault layer to dial instead (Dial).
func (p *Profile) NewStdioTransport(cl outcome.Classifier) *mcpstdio.Transport {
	t := &mcpstdio.Transport{Command: p.StdioCommand(), Tool: p.Operation.Tool, Classifier: cl,
		Options: mcpstdio.Options{StartTimeout: p.StartTimeout()}}
	if p.MCP != nil {
		t.Options.ProtocolVersion = p.MCP.ProtocolVersion
	}
	return t
}

// resolveStdioDir makes mcp.dir absolute against the folder of the file that names it,
// and makes that folder the default, so `command: [./refunds-server]` runs the same
// from any working directory.
func resolveStdioDir(root *yaml.Node, dir string) {
	if t := mappingValue(root, "transport"); t == nil || t.Value != TransportMCPStdio {
		return
	}
	m := mappingValue(root, "mcp")
	if m == nil || m.Kind != yaml.MappingNode || mappingValue(m, "command") == nil {
		return
	}
	if v := mappingValue(m, "dir"); v != nil {
		if v.Kind == yaml.ScalarNode && v.Value != "" && !filepath.IsAbs(v.Value) {
			v.Value = filepath.Join(dir, v.Value)
		}
		return
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "dir", Line: m.Line},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: dir, Line: m.Line})
}

// stdioOnly are the mcp: fields only a stdio server has.
func (p *Profile) onlyOverStdio() []fieldError {
	var errs []fieldError
	if o := p.MCP; o != nil {
		for field, set := range map[string]bool{"mcp.command": len(o.Command) > 0, "mcp.env": len(o.Env) > 0, "mcp.dir": o.Dir != "", "mcp.start_timeout": o.StartTimeout != 0} {
			if set {
				errs = append(errs, fieldError{Path: field, Msg: "only with transport: mcp-stdio (a server idemproof starts)"})
			}
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
	return errs
}

// stdioFieldErrors drops the errors of HTTP fields a stdio server has no use for (an
// operation's path and method, a ledger's path), and adds its own: a command, no URL, no
// header, no second principal.
func (p *Profile) stdioFieldErrors(found []fieldError) []fieldError {
	var errs []fieldError
	for _, e := range found {
		switch {
		case e.Path == "base_url",
			strings.HasSuffix(e.Path, "operation.method"), strings.HasSuffix(e.Path, "operation.path"),
			strings.HasSuffix(e.Path, "side_effects.path"), strings.HasSuffix(e.Path, "side_effects.method"):
			continue
		}
		errs = append(errs, e)
	}
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	const why = "not with transport: mcp-stdio: the server is a process spoken to over its stdin and stdout"
	if p.MCP == nil || len(p.MCP.Command) == 0 || p.MCP.Command[0] == "" {
		add("mcp.command", "required with transport: mcp-stdio: the server's program and arguments, e.g. [go, run, ./server] or [npx, -y, my-mcp-server]")
	}
	if p.MCP != nil {
		if p.MCP.Session != "" {
			add("mcp.session", "%s, whose session is its process (one per connection)", why)
		}
		if p.MCP.StartTimeout < 0 {
			add("mcp.start_timeout", "must be positive, e.g. 10s")
		}
		for k := range p.MCP.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				add("mcp.env", "%q is not an environment variable name", k)
			}
		}
	}
	if p.BaseURL != "" {
		add("base_url", "%s (it has no URL)", why)
	}
	if p.Proxy != nil {
		add("proxy", "%s: the fault layer on its pipes runs in idemproof itself", why)
	}
	if p.TLS != nil {
		add("tls", "%s", why)
	}
	if p.KeyField == "" {
		add("key_field", "required with transport: mcp-stdio: where the tools/call carries the key, e.g. params._meta.idempotency_key or params.arguments.idempotency_key (a line has no headers)")
	}
	if p.Operation.Tool == "" {
		add("operation.tool", "required with transport: mcp-stdio: the tool's name for tools/call (operation.body is its arguments)")
	}
	for _, op := range []struct {
		path string
		op   Operation
	}{{"operation", p.Operation}} {
		if op.op.Path != "" || op.op.Method != "" {
			add(op.path+".path", "%s: a tool call has no method or path, only operation.tool", why)
		}
		if len(op.op.Headers) > 0 {
			add(op.path+".headers", "%s: a line carries no headers", why)
		}
	}
	if p.Other != nil && (p.Other.Path != "" || len(p.Other.Headers) > 0) {
		add("other_operation.path", "%s: a tool call has no path or headers, only other_operation.tool", why)
	}
	if p.SideEffects.Tool == "" {
		add("side_effects.tool", "required with transport: mcp-stdio: the ledger is a tool call, e.g. {tool: list_refunds, arguments: '{\"order_id\": \"{{.Entity}}\"}', count: result.structuredContent.count}")
	}
	if len(p.Principals) > 0 {
		add("principals", "%s: its one client is the process that started it, so there is no second principal", why)
	}
	if p.Expect.ReplayHeader != "" || len(p.Expect.ReplayHeaders) > 0 {
		add("expect.replay_header", "%s: an answer is a line, with no headers to mark a replay", why)
	}
	if p.EntitySetup != nil {
		add("entity_setup", "%s: an entity is set up by an HTTP request", why)
	}
	for _, h := range []struct {
		field string
		form  HookForm
		set   bool
	}{{"slow_operation", p.Slow.formOrZero(), p.Slow != nil}, {"fail_operation", p.FailHook.formOrZero(), p.FailHook != nil}} {
		if h.set && h.form.Field == "" {
			add(h.field, "%s: a tool call over stdio has no header, query or path to carry a test hook; declare it in the field form, a place in the tools/call request, e.g. {field: params._meta.test_delay, value: 400ms}", why)
		}
	}
	if p.Crash != nil {
		add("crash", "%s: a crash over stdio is the process exiting, which the fault layer's kill does (replay/after-restart)", why)
	}
	return errs
}

func (h *TestHook) formOrZero() HookForm {
	if h == nil {
		return HookForm{}
	}
	return h.Form()
}

// missingOverStdio answers Missing for what a stdio server cannot have (ok false: c is
// not such a capability, or the server is not a stdio one and has it).
func (p *Profile) missingOverStdio(c Capability) (string, bool) {
	if !p.IsStdio() {
		switch c {
		case CapServerRestart:
			return "a server idemproof starts and may kill and start again: transport mcp-stdio", true
		case CapRequestHeaders:
			return "", true
		}
		return "", false
	}
	switch c {
	case CapMCPSessions:
		return "a second session of the same server: over transport mcp-stdio a session is the server's process; a retry after the server started again is replay/after-restart's", true
	case CapHTTPConnections:
		return "plain HTTP requests on connections the runner reuses; transport mcp-stdio sends every attempt on the server's stdin", true
	case CapDirectRoute:
		return "a route to the server around the fault layer: over transport mcp-stdio its one connection goes through the layer", true
	case CapPrincipals:
		return "two principals: over transport mcp-stdio the server's one client is the process that started it", true
	case CapRequestHeaders:
		return "a header on the request: over transport mcp-stdio a request is a line on a pipe, with none", true
	case CapServerRestart:
		return "", true
	}
	return "", false
}
