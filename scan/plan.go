package scan

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/suggest"
)

// Config is what a scan is told: the target, the --args file, what to probe and how.
type Config struct {
	// MCP is an MCP server's Streamable HTTP endpoint; or MCPCommand an MCP server's
	// command (argv), started and spoken to over its stdin and stdout (MCPDir its working
	// directory, "" the current one); or OpenAPI is a document's file and BaseURL where
	// the API answers.
	MCP        string
	MCPCommand []string
	MCPDir     string
	// StartTimeout bounds a stdio server's start and initialize answer (0:
	// mcpstdio.DefaultStartTimeout); a written profile declares it as mcp.start_timeout.
	StartTimeout time.Duration
	OpenAPI      string
	BaseURL      string
	// Header goes on every request (credentials).
	Header http.Header
	// TLS verifies an https:// target; nil: the system's roots.
	TLS *tls.Config
	// Args are the --args file's entries; nil for none.
	Args *Args
	// Only restricts the scan to the operations matching these globs (others are listed,
	// not probed). Include names operations to probe even when destructive, read-only or
	// excluded; Exclude names operations never to probe. A glob matches a tool's name, an
	// operation's operationId, or "METHOD /path".
	Only, Include, Exclude []string
	// AllowDestructive probes destructiveHint tools and DELETE operations;
	// IncludeReadOnly probes readOnlyHint tools.
	AllowDestructive, IncludeReadOnly bool
	// Seed seeds the fault proxy's random source; the run prints it.
	Seed int64
	// Parallel is how many operations are probed at once (default DefaultParallel).
	Parallel int
	// CallTimeout bounds one call (default DefaultCallTimeout); OperationTimeout all of
	// one operation's probes (default DefaultOperationTimeout).
	CallTimeout, OperationTimeout time.Duration
	// Tool names the scanning tool in the report ("idemproof v1.2.3").
	Tool string
	// Progress, when set, is called with each operation's row as its probes end; calls
	// never overlap.
	Progress func(Row)
}

// Defaults of Config.
const (
	DefaultParallel         = 4
	DefaultCallTimeout      = 10 * time.Second
	DefaultOperationTimeout = 60 * time.Second
)

func (c *Config) parallel() int {
	if c.Parallel <= 0 {
		return DefaultParallel
	}
	return c.Parallel
}

func (c *Config) callTimeout() time.Duration {
	if c.CallTimeout <= 0 {
		return DefaultCallTimeout
	}
	return c.CallTimeout
}

func (c *Config) operationTimeout() time.Duration {
	if c.OperationTimeout <= 0 {
		return DefaultOperationTimeout
	}
	return c.OperationTimeout
}

// Enumerate lists the target's operations (an MCP server's tools/list, an OpenAPI
// document's mutating operations), builds each one's arguments, and plans the scan:
// which operations the probes will call, with which arguments, and why the others are
// not probed. It calls no tool and sends no operation; an MCP server sees initialize and
// tools/list only. An error means nothing can be scanned (an unreachable server, a
// document that does not load).
func Enumerate(ctx context.Context, cfg *Config) (*Target, error) {
	var t *Target
	var err error
	targets := 0
	for _, given := range []bool{cfg.MCP != "", len(cfg.MCPCommand) > 0, cfg.OpenAPI != ""} {
		if given {
			targets++
		}
	}
	switch {
	case targets > 1:
		return nil, errors.New("give one of --mcp, --mcp-command and --openapi: one scan is one server")
	case cfg.MCP != "":
		t, err = enumerateMCP(ctx, cfg)
	case len(cfg.MCPCommand) > 0:
		t, err = enumerateMCPStdio(ctx, cfg)
	case cfg.OpenAPI != "":
		t, err = enumerateOpenAPI(ctx, cfg)
	default:
		return nil, errors.New("nothing to scan: give --mcp URL (an MCP server's Streamable HTTP endpoint), --mcp-command -- SERVER ARGS… (a stdio server) or --openapi FILE with --base-url URL")
	}
	if err != nil {
		return nil, err
	}
	if cfg.Args != nil {
		applyArgs(t, cfg.Args)
	}
	if err := checkGlobs(cfg); err != nil {
		return nil, err
	}
	plan(t, cfg)
	return t, nil
}

func checkGlobs(cfg *Config) error {
	for flag, list := range map[string][]string{"--only": cfg.Only, "--include": cfg.Include, "--exclude": cfg.Exclude} {
		for _, g := range list {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("%s %q: not a glob (%v)", flag, g, err)
			}
		}
	}
	return nil
}

// matches reports whether a glob names the operation: its name, or "METHOD /path".
func matches(op *Operation, globs []string) (string, bool) {
	for _, g := range globs {
		if ok, _ := path.Match(g, op.Name); ok {
			return g, true
		}
		if op.Method != "" {
			if ok, _ := path.Match(g, op.Method+" "+op.Path); ok {
				return g, true
			}
		}
	}
	return "", false
}

// plan sets each operation's Skip: what the safety rules keep from being called.
func plan(t *Target, cfg *Config) {
	for _, op := range t.Operations {
		if op.Skip != "" {
			continue
		}
		if len(cfg.Only) > 0 {
			if _, ok := matches(op, cfg.Only); !ok {
				op.Skip = "not selected (--only)"
				continue
			}
		}
		_, included := matches(op, cfg.Include)
		if included {
			continue
		}
		if g, ok := matches(op, cfg.Exclude); ok {
			op.Skip = fmt.Sprintf("excluded (--exclude %s); --include names it to probe it", g)
			continue
		}
		switch {
		case op.Destructive && !cfg.AllowDestructive && op.Method == "DELETE":
			op.Skip = "a DELETE: probed with --allow-destructive, or --include " + op.Name
		case op.Destructive && !cfg.AllowDestructive:
			op.Skip = "destructive (destructiveHint: true): probed with --allow-destructive, or --include " + op.Name
		case op.ReadOnly && !cfg.IncludeReadOnly:
			op.Skip = "read-only (readOnlyHint: true): listed; probed with --include-readonly"
		}
	}
}

// find is the operation an --args entry names: by name, or by "METHOD /path".
func find(t *Target, name string) *Operation {
	for _, op := range t.Operations {
		if op.Name == name || (op.Method != "" && strings.EqualFold(op.Method+" "+op.Path, name)) {
			return op
		}
	}
	return nil
}

func operationNames(t *Target) []string {
	out := make([]string, 0, len(t.Operations))
	for _, op := range t.Operations {
		out = append(out, op.Name)
	}
	return out
}

// applyArgs puts the --args file's entries on their operations. An entry that names no
// operation is a note; an entry in error is its operation's Problem; the rest go on.
func applyArgs(t *Target, a *Args) {
	what := "tool of the server"
	if t.Kind == KindOpenAPI {
		what = "mutating operation of the document"
	}
	for _, e := range a.Entries {
		where := fmt.Sprintf("--args %s: line %d: operations.%s", a.Source, e.Line, e.Name)
		op := find(t, e.Name)
		if op == nil {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: no %s is named %s%s; the entry is ignored", where, what, e.Name, suggest.DidYouMean(e.Name, operationNames(t))))
			continue
		}
		if e.Err != nil {
			op.Request, op.Problem = nil, where+": "+e.Err.Error()
			continue
		}
		if e.Skip {
			op.Skip = "--args says skip"
			continue
		}
		if err := applyEntry(t, op, e); err != nil {
			op.Request, op.Problem = nil, where+"."+err.Error()
		}
	}
}

// fieldErr is an --args error at a field of the entry: "arguments.ordr_id: …".
type fieldErr struct{ field, msg string }

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

func applyEntry(t *Target, op *Operation, e *ArgsEntry) error {
	if e.Ledger != nil {
		l := e.Ledger
		switch {
		case t.Kind == KindMCP && l.Tool == "":
			return &fieldErr{"ledger", "an MCP server's ledger is a tool: give tool: and arguments:"}
		case t.Kind == KindOpenAPI && l.Tool != "":
			return &fieldErr{"ledger.tool", "an HTTP API's ledger is a request: give method: and path:"}
		case l.Tool != "" && find(t, l.Tool) == nil:
			return &fieldErr{"ledger.tool", fmt.Sprintf("the server has no tool %s%s", l.Tool, suggest.DidYouMean(l.Tool, operationNames(t)))}
		}
		op.Ledger = &Ledger{Tool: l.Tool, Method: strings.ToUpper(l.Method), Path: l.Path, Count: l.Count}
		if l.Arguments != nil {
			op.Ledger.Arguments = marshalBody(l.Arguments)
		}
	}
	if t.Kind == KindMCP {
		return applyToolEntry(op, e)
	}
	return applyHTTPEntry(op, e)
}

func applyToolEntry(op *Operation, e *ArgsEntry) error {
	if len(e.Path) > 0 || len(e.Query) > 0 {
		return &fieldErr{"path", "a tool has no path or query parameters: its arguments go in arguments:"}
	}
	input := op.src.input
	skip := keyArgument(op.Key)
	if e.Arguments != nil {
		if err := checkArguments(op, e.Arguments, skip, "arguments"); err != nil {
			return err
		}
		op.Request, op.Problem = &Request{Body: marshalBody(e.Arguments), Change: chooseChange(e.Arguments, input, skip), From: "--args"}, ""
	}
	if op.Request == nil {
		return nil // the schema's Problem stands: the entry did not give arguments
	}
	if len(e.Headers) > 0 {
		op.Request.Header = e.Headers
	}
	return applyChange(op, e)
}

// checkArguments holds an --args object against the schema: every name one of the
// schema's properties (when it lists them), every required one present, the key left to
// the scan.
func checkArguments(op *Operation, args map[string]any, skip, field string) error {
	input := op.src.input
	if input == nil {
		return nil
	}
	props := sortedNames(input.Properties)
	for _, name := range sortedNames(args) {
		switch {
		case name == skip:
			return &fieldErr{field + "." + name, "the key: the scan fills it with a fresh key on every call; leave it out"}
		case len(props) > 0 && input.Properties[name] == nil:
			return &fieldErr{field + "." + name, fmt.Sprintf("%s takes no argument %s (its arguments: %s)%s", op.Name, name, describeNames(props), suggest.DidYouMean(name, props))}
		}
	}
	for _, name := range input.Required {
		if _, ok := args[name]; !ok && name != skip {
			return &fieldErr{field, fmt.Sprintf("lacks %s, which %s requires", name, op.Name)}
		}
	}
	return nil
}

// applyChange puts the change an entry names on the operation's request.
func applyChange(op *Operation, e *ArgsEntry) error {
	if len(e.Change) == 0 {
		return nil
	}
	c, err := entryChange(op, e)
	if err != nil {
		return err
	}
	op.Request.Change = c
	return nil
}

// entryChange is the change an entry names: one argument with its other value.
func entryChange(op *Operation, e *ArgsEntry) (*Change, error) {
	var body map[string]any
	if err := jsonObject(op.Request.Body, &body); err != nil {
		return nil, &fieldErr{"change", "the request has no JSON object to change: " + err.Error()}
	}
	for name, v := range e.Change {
		old, ok := body[name]
		if !ok {
			return nil, &fieldErr{"change." + name, fmt.Sprintf("not one of the arguments sent (%s)%s", describeNames(sortedNames(body)), suggest.DidYouMean(name, sortedNames(body)))}
		}
		alt := make(map[string]any, len(body))
		for k, x := range body {
			alt[k] = x
		}
		alt[name] = v
		return &Change{Member: name, Body: marshalBody(alt), What: fmt.Sprintf("%s %s → %s", name, shortJSON(old), shortJSON(v))}, nil
	}
	return nil, nil
}

func applyHTTPEntry(op *Operation, e *ArgsEntry) error {
	src := op.src
	for name := range e.Path {
		if !strings.Contains(op.Path, "{"+name+"}") {
			return &fieldErr{"path." + name, fmt.Sprintf("%s %s has no path parameter %s", op.Method, op.Path, name)}
		}
	}
	queries := paramNames(src, "query")
	for _, name := range sortedNames(e.Query) {
		if !contains(queries, name) {
			return &fieldErr{"query." + name, fmt.Sprintf("%s declares no query parameter %s (its query parameters: %s)%s", op.Name, name, describeNames(queries), suggest.DidYouMean(name, queries))}
		}
	}
	if e.Arguments != nil {
		if src.input == nil {
			return &fieldErr{"arguments", op.Name + " takes no JSON body"}
		}
		if err := checkArguments(op, e.Arguments, keyArgument(op.Key), "arguments"); err != nil {
			return err
		}
	}
	req, problem := httpRequestWith(op, e)
	if req == nil {
		return &fieldErr{"arguments", problem}
	}
	op.Request, op.Problem = req, ""
	return applyChange(op, e)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
