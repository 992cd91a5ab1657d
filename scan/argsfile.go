package scan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/idemproof/idemproof/profile"
)

// maxArgsFile bounds the --args file.
const maxArgsFile = 1 << 20

// Args is the --args file: real arguments per operation, where the schema's examples
// and simple values are not enough (docs/scan.md, "Arguments"):
//
//	headers: {Authorization: "Bearer ${TOKEN}"}      # optional: on every call (after --header)
//	operations:
//	  refund:                                         # a tool name, an operationId, or "POST /v1/notes"
//	    arguments: {order_id: "{{.Entity}}", amount: 4900}   # a tool's arguments, or the JSON body
//	    path: {id: "{{.Entity}}"}                     # HTTP path parameters
//	    query: {dry_run: "false"}                     # HTTP query parameters
//	    headers: {X-Account: acct_1}                  # on this operation's calls
//	    change: {amount: 5000}                        # the argument the changed-request probe changes
//	    ledger:                                       # counts executions, so judgments need no per-execution value
//	      tool: list_refunds                          #   a tool and its arguments (MCP), or
//	      arguments: {order_id: "{{.Entity}}"}        #   method and path (HTTP: GET /v1/refunds?order_id={{.Entity}})
//	      count: result.structuredContent.count       #   a gjson path to the count in its answer
//	    skip: true                                    # never probe it
//
// {{.Entity}} is a fresh value for every probe (ip-scan-<nonce>-<n>): put it where a
// value must be unique, and where the ledger finds the probe's executions. ${NAME} and
// ${NAME:-default} in values are read from the environment, as in a profile.
type Args struct {
	// Source is the file's path.
	Source  string
	Headers map[string]string
	// Entries are the operations' entries in file order.
	Entries []*ArgsEntry
}

// ArgsEntry is one operation's entry. Err is what is wrong with it (an unknown field, a
// template that does not parse): the operation is then not probed, and the rest goes on.
type ArgsEntry struct {
	Name      string            `yaml:"-"`
	Line      int               `yaml:"-"`
	Arguments map[string]any    `yaml:"arguments"`
	Path      map[string]string `yaml:"path"`
	Query     map[string]string `yaml:"query"`
	Headers   map[string]string `yaml:"headers"`
	Change    map[string]any    `yaml:"change"`
	Ledger    *ArgsLedger       `yaml:"ledger"`
	Skip      bool              `yaml:"skip"`
	Err       error             `yaml:"-"`
}

// ArgsLedger is an entry's ledger.
type ArgsLedger struct {
	Tool      string         `yaml:"tool"`
	Arguments map[string]any `yaml:"arguments"`
	Method    string         `yaml:"method"`
	Path      string         `yaml:"path"`
	Count     string         `yaml:"count"`
}

// LoadArgs reads an --args file. A file that is not YAML, or whose top level has a
// field other than headers and operations, is an error; an entry in error is kept with
// its Err set.
func LoadArgs(path string) (*Args, error) {
	info, err := os.Stat(path)
	if err != nil && strings.ContainsAny(path, "={") {
		return nil, fmt.Errorf("--args takes a YAML file, not the arguments themselves (%q is no file): write them per operation, e.g. operations: {refund: {arguments: {order_id: \"{{.Entity}}\", amount: 4900}}} (docs/scan.md, \"Arguments\")", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--args: %w", err)
	}
	if info.Size() > maxArgsFile {
		return nil, fmt.Errorf("--args %s: %d bytes, more than the %d an --args file may have", path, info.Size(), maxArgsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--args: %w", err)
	}
	return ParseArgs(path, data)
}

// ParseArgs reads an --args document; source names it in errors.
func ParseArgs(source string, data []byte) (*Args, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("--args %s: %w", source, err)
	}
	a := &Args{Source: source}
	if len(doc.Content) == 0 {
		return a, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("--args %s: line %d: want a mapping with operations: (and headers:)", source, top.Line)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "headers":
			if err := expandNode(v); err != nil {
				return nil, fmt.Errorf("--args %s: headers: %w", source, err)
			}
			if err := v.Decode(&a.Headers); err != nil {
				return nil, fmt.Errorf("--args %s: line %d: headers: %s", source, v.Line, yamlMessage(err))
			}
		case "operations":
			if v.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("--args %s: line %d: operations: want a mapping from operation names to their arguments", source, v.Line)
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				a.Entries = append(a.Entries, parseEntry(v.Content[j], v.Content[j+1]))
			}
		default:
			return nil, fmt.Errorf("--args %s: line %d: unknown field %q: the file has headers: and operations:", source, k.Line, k.Value)
		}
	}
	return a, nil
}

func parseEntry(k, v *yaml.Node) *ArgsEntry {
	e := &ArgsEntry{Name: k.Value, Line: k.Line}
	if v.Kind != yaml.MappingNode {
		e.Err = fmt.Errorf("want a mapping (arguments:, path:, query:, headers:, change:, ledger:, skip:)")
		return e
	}
	if err := expandNode(v); err != nil {
		e.Err = err
		return e
	}
	// Each entry is decoded on its own, strictly: a misspelt field spoils that entry only.
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		e.Err = err
		return e
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	name, line := e.Name, e.Line
	if err := dec.Decode(e); err != nil {
		e.Err = fieldError(err, v.Line)
	}
	e.Name, e.Line = name, line
	if e.Err == nil {
		e.Err = e.check()
	}
	return e
}

// fieldError rewrites a strict decode's "line N: field x not found in type scan.ArgsEntry"
// for people, with the line in the file (the entry was re-encoded, so its lines start at 1).
func fieldError(err error, base int) error {
	msg := yamlMessage(err)
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	var n int
	var rest string
	if _, scanErr := fmt.Sscanf(msg, "line %d: %s", &n, &rest); scanErr == nil {
		msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", n))
		msg = fmt.Sprintf("line %d: %s", base+n-1, msg)
	}
	msg = strings.Replace(msg, "not found in type scan.ArgsEntry", "is not one of arguments, path, query, headers, change, ledger, skip", 1)
	msg = strings.Replace(msg, "not found in type scan.ArgsLedger", "is not one of the ledger's tool, arguments, method, path, count", 1)
	return errors.New(msg)
}

func yamlMessage(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

// check tries the entry's templates and its ledger's shape.
func (e *ArgsEntry) check() error {
	texts := map[string]string{}
	if e.Arguments != nil {
		texts["arguments"] = marshalBody(e.Arguments)
	}
	for field, m := range map[string]map[string]string{"path": e.Path, "query": e.Query, "headers": e.Headers} {
		for k, v := range m {
			texts[field+"."+k] = v
		}
	}
	if len(e.Change) > 1 {
		return fmt.Errorf("change: names %d arguments (%s): it changes exactly one", len(e.Change), strings.Join(sortedNames(e.Change), ", "))
	}
	if l := e.Ledger; l != nil {
		switch {
		case l.Count == "":
			return errors.New("ledger.count: required: a gjson path to the count in the ledger's answer, e.g. result.structuredContent.count or data.#")
		case l.Tool == "" && l.Path == "":
			return errors.New("ledger: give tool: (and arguments:) for an MCP server, or path: (and method:) for an HTTP API")
		case l.Tool != "" && l.Path != "":
			return errors.New("ledger: give tool: or path:, not both")
		case l.Path != "" && !strings.HasPrefix(l.Path, "/"):
			return fmt.Errorf("ledger.path: must start with /, got %q", l.Path)
		}
		texts["ledger.path"] = l.Path
		if l.Arguments != nil {
			texts["ledger.arguments"] = marshalBody(l.Arguments)
		}
	}
	fields := sortedNames(texts)
	sort.Strings(fields)
	for _, f := range fields {
		if _, err := profile.Render(texts[f], profile.SampleEntity); err != nil {
			return fmt.Errorf("%s: template: %s (only {{.Entity}} is available)", f, strings.TrimPrefix(err.Error(), "template: "))
		}
	}
	return nil
}

// expandNode fills ${NAME} and ${NAME:-default} in every scalar value under n (never in
// names), as a profile does (profile.ExpandEnv).
func expandNode(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := profile.ExpandEnv(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		n.Value = v
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if err := expandNode(n.Content[i]); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := expandNode(c); err != nil {
				return err
			}
		}
	}
	return nil
}
