package profileinit

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// Tool is what a scan learned of one MCP tool, for FromMCPTool.
type Tool struct {
	// Endpoint is the server's Streamable HTTP endpoint URL; Server names the server.
	Endpoint, Server  string
	Name, Description string
	// Command is a stdio server's command (argv) instead of an Endpoint, and Dir the
	// folder it runs in: the profile is then transport: mcp-stdio.
	Command []string
	Dir     string
	// StartTimeout is the stdio server's start timeout the scan was given (0: the
	// default, not written).
	StartTimeout time.Duration
	// KeyField is where the key travels in the tools/call request (params._meta.NAME,
	// params.arguments.NAME, params.idempotencyKey); KeyHeader instead when it is an HTTP
	// header. KeyWhy says how the scan knew.
	KeyField, KeyHeader, KeyWhy string
	// KeyUUID: the key's schema says format uuid.
	KeyUUID bool
	// Arguments are the arguments the scan called the tool with, Changed the ones it sent
	// with one changed (nil: none); Schema is the tool's input schema.
	Arguments, Changed map[string]any
	Schema             *openapi3.Schema
	// Ledger is the ledger --args declared (nil: a guess among ReadOnlyTools, the
	// server's read-only tools).
	Ledger        *ToolLedger
	ReadOnlyTools []string
	// UniqueField is the member of the answer seen to differ between two executions.
	UniqueField string
	// InFlightCode and MismatchCode are the JSON-RPC error codes the scan saw for a
	// concurrent copy and for the changed request; nil when it saw none.
	InFlightCode, MismatchCode *int64
	// Capability: the server advertises tools.idempotency (SEP-3182).
	Capability bool
}

// ToolLedger is a ledger read by tool call.
type ToolLedger struct {
	Tool, Arguments, Count string
}

// FromMCPTool writes a starter profile (transport: mcp) for one tool of an MCP server,
// from what idemproof scan learned of it: the key's place, the arguments it called the
// tool with (a string argument carrying {{.Entity}}), the changed arguments, the ledger
// --args declared, the refusals it saw. What it could not know is marked "# guess:".
func FromMCPTool(t Tool) ([]byte, error) {
	stdio := len(t.Command) > 0
	where, base, path := "", "", ""
	if stdio {
		where = "the stdio server " + strings.Join(t.Command, " ")
	} else {
		u, err := url.Parse(t.Endpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("the endpoint %q is not a URL", t.Endpoint)
		}
		where, base, path = t.Endpoint, u.Scheme+"://"+u.Host, u.EscapedPath()
		if path == "" {
			path = "/"
		}
	}
	var w writer
	w.line("# idemproof target profile for the MCP tool %s of %s (%s),", t.Name, orNone(t.Server), where)
	w.line("# written by idemproof scan. Lines marked \"# guess:\" are guesses: confirm or edit them.")
	w.line("# Every field: docs/profiles.md and docs/mcp.md. Then: idemproof check --profile THIS_FILE")
	w.line("name: %s", yamlString(profileName(t.Server, t.Name)))
	if stdio {
		w.line("transport: mcp-stdio")
	} else {
		w.line("transport: mcp")
		w.line("base_url: %s", yamlString("${API_URL:-"+base+"}"))
	}
	keyArg := ""
	switch {
	case t.KeyHeader != "":
		w.line("key_header: %s   # %s", yamlString(t.KeyHeader), t.KeyWhy)
	default:
		w.line("key_field: %s   # %s", yamlString(t.KeyField), t.KeyWhy)
		keyArg, _ = strings.CutPrefix(t.KeyField, "params.arguments.")
		if keyArg == t.KeyField {
			keyArg = ""
		}
	}
	w.line("mcp:")
	if stdio {
		argv := make([]string, len(t.Command))
		for i, a := range t.Command {
			argv[i] = yamlString(a)
		}
		w.line("  command: [%s]   # the command idemproof scan started the server with", strings.Join(argv, ", "))
		if t.Dir != "" {
			w.line("  dir: %s   # where it started it", yamlString(t.Dir))
		}
		if t.StartTimeout > 0 {
			w.line("  start_timeout: %s   # the scan's --start-timeout", t.StartTimeout)
		}
	}
	if t.KeyField == "params.idempotencyKey" {
		w.line("  require_idempotency_capability: %t   # the server advertises tools.idempotency: %t", t.Capability, t.Capability)
	} else {
		w.line("  require_idempotency_capability: false   # the key is not SEP-3182's params.idempotencyKey")
	}
	args := map[string]any{}
	for k, v := range t.Arguments {
		args[k] = v
	}
	entity, entityNote := "", ""
	if !strings.Contains(marshal(args), "{{.Entity}}") {
		entity, entityNote = chooseEntity(args, t.Schema)
	}
	body, altered, alteredNote := bodies(args, entity, keyArg)
	if t.Changed != nil {
		changed := map[string]any{}
		for k, v := range t.Changed {
			changed[k] = v
		}
		if entity != "" {
			changed[entity] = "{{.Entity}}"
		}
		delete(changed, keyArg)
		altered, alteredNote = marshal(changed), "the changed request idemproof scan sent"
	}
	w.line("operation:")
	if !stdio {
		w.line("  path: %s", yamlString(path))
	}
	w.line("  tool: %s", yamlString(t.Name))
	w.line("  body: %s%s", yamlString(body), comment(join("the arguments idemproof scan called it with", entityNote)))
	w.line("  altered_body: %s%s", yamlString(altered), comment(alteredNote))
	w.line("side_effects:                     # the ledger: how many times did the tool run for the entity?")
	switch l := t.Ledger; {
	case l != nil:
		w.line("  tool: %s   # declared in --args", yamlString(l.Tool))
		w.line("  arguments: %s", yamlString(l.Arguments))
		w.line("  count: %s", yamlString(l.Count))
	default:
		tool, note := guessLedgerTool(t.Name, t.ReadOnlyTools)
		prop := entity
		if prop == "" {
			prop = "entity"
		}
		w.line("  tool: %s   # %s", yamlString(tool), note)
		w.line("  arguments: %s   # guess: it takes the entity's %s", yamlString(`{"`+prop+`": "{{.Entity}}"}`), prop)
		w.line("  count: result.structuredContent.count   # guess: a count in its structured result")
	}
	w.line("outcomes:                         # an MCP server answers 200 whatever happened: the meaning is in the body")
	if c := t.InFlightCode; c != nil {
		w.line("  in_flight: {json: {path: error.code, equals: %d}}   # seen: a copy sent at once was refused with it", *c)
	} else {
		w.line("  in_flight: {json: {path: error.message, matches: \"(?i)in.?flight|in progress|retry\"}}   # guess: the scan saw no in-flight refusal")
	}
	if c := t.MismatchCode; c != nil {
		w.line("  mismatch: {json: {path: error.code, equals: %d}}   # seen: the key with other arguments was refused with it", *c)
	} else {
		w.line("  mismatch: {json: {path: error.message, matches: \"(?i)idempoten|reuse|differ|mismatch\"}}   # guess: the scan saw no refusal of a changed request")
	}
	w.line("expect:")
	w.line("  missing_key: optional   # guess: say \"400\" if a call without a key is refused (and add a missing_key outcome rule)")
	if t.KeyUUID {
		w.line("  key_format: uuid   # the key's schema says format uuid: every key the harness sends is a UUID")
	}
	if t.UniqueField != "" && !strings.Contains(t.UniqueField, "#json") {
		w.line("  unique_field: %s   # detected by idemproof scan: it differed between two executions", yamlString(t.UniqueField))
	}
	w.line("# retention: 24h   # your declared key window; declare it where the test deployment keeps it short")
	return []byte(w.b.String()), nil
}

// guessLedgerTool picks the read-only tool most likely to count the tool's effects: one
// whose name shares a word with it (refund → list_refunds), else the first list_ or
// count_ tool.
func guessLedgerTool(name string, readOnly []string) (string, string) {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for _, ro := range readOnly {
		l := strings.ToLower(ro)
		for _, w := range words {
			if len(w) >= 4 && strings.Contains(l, w) {
				return ro, "guess: a read-only tool of the server named like it; confirm it counts " + name + "'s effects"
			}
		}
	}
	for _, ro := range readOnly {
		if l := strings.ToLower(ro); strings.HasPrefix(l, "list") || strings.HasPrefix(l, "count") {
			return ro, "guess: a read-only tool of the server; confirm it counts " + name + "'s effects"
		}
	}
	return "list_" + name, "guess: the server has no read-only tool that looks like a ledger: name the tool that counts " + name + "'s effects"
}
