// Package profileinit writes a starter target profile: from one operation of an OpenAPI
// document (3.0 or 3.1, read with kin-openapi), from one tool of an MCP server as
// idemproof scan saw it (FromMCPTool), or a commented template. The profile it
// writes always loads (profile.Parse), but most of what it knows is a guess —
// which property carries the fresh entity, which GET is the ledger, the statuses the API
// chose — and every guess is marked with a "# guess:" comment for a person to confirm.
//
// From the document it takes: the operation's method and path (path parameters become
// {{.Entity}}), a JSON body (the media type's example, else the schema's, else a minimal
// body that satisfies the schema's required properties), the key's placement (a header
// parameter whose name contains "idempotency", else a body property whose name does, else
// the Idempotency-Key header as a guess), the declared 409 and 422 answers, a replay
// header (a response header whose name contains "replay"), a validation error (a number
// below its schema minimum, when 400 is declared), a second operation declaring the same
// key header (other_operation), and the ledger (a GET on the
// same path with a query parameter named like the entity property, counted by a "count"
// or "total" property or the length of an array).
package profileinit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Options choose the operation and name the result.
type Options struct {
	// Operation is the operationId to profile; empty picks the one operation that
	// declares an idempotency key, or fails listing the candidates.
	Operation string
	// Method and Path choose the operation instead, for one without an operationId.
	Method, Path string
	// Source names the document in the profile's header comment.
	Source string
	// BaseURL, when set, is where the API answers, instead of the document's first server.
	BaseURL string
	// UniqueField, when set, is a member of the operation's answer seen to differ between
	// two executions (idemproof scan detects it): written as expect.unique_field.
	UniqueField string
}

// Template is the commented starter profile written without an OpenAPI document.
const Template = `# idemproof target profile — written by idemproof init; every field is explained in
# docs/profiles.md. Edit the guesses, then: idemproof check --profile profile.yaml
name: my-api
base_url: ${API_URL:-http://127.0.0.1:8080}   # your service; the ledger is read here directly
key_header: Idempotency-Key                  # or key_field: a JSON path into the body
operation:                                   # the keyed, side-effecting call
  method: POST
  path: /v1/refunds
  headers: { Content-Type: application/json }
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'          # {{.Entity}} is fresh per scenario
  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'  # same entity, another payload
side_effects:                                # the ledger: how many times did it happen?
  method: GET
  path: /v1/refunds?order_id={{.Entity}}
  count: data.#                              # a JSON path: "count", or "data.#" (array length)
expect:                                      # draft-07 answers; Stripe-style APIs: mismatch 400
  in_flight: 409
  mismatch: 422
  missing_key: "400"                         # or "optional"
  # key_format: uuid                         # a target that accepts only UUID keys
  # replay_header: Idempotent-Replayed
  # fingerprint_ignores: [note]              # body members left out of the fingerprint on purpose
  # replay_status: 200                       # replays answer 200 after the 201 that executed
# retention: 24h                             # your declared key window (the expiry scenarios wait it out)
# entity_setup:                              # when the operation needs a parent that exists
#   path: /v1/orders                         #   (an order, a charge): created per scenario
#   body: '{"note": "{{.Entity}}"}'
#   id: id                                   # where its answer names the new entity's id
# tls: { ca_file: test-ca.pem }              # a test CA for an https base_url
`

// FromOpenAPI loads an OpenAPI document (JSON or YAML, 3.0 or 3.1; external references
// are not followed) and writes the profile for one of its operations.
func FromOpenAPI(data []byte, opts Options) ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	return fromDocument(doc, opts)
}

// FromOpenAPIFile is FromOpenAPI for a document in a file, following its $refs to other
// local files (never to URLs).
func FromOpenAPIFile(path string, opts Options) ([]byte, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = openapi3.ReadFromFile
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	return fromDocument(doc, opts)
}

func fromDocument(doc *openapi3.T, opts Options) ([]byte, error) {
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		// A published document that does not validate is still worth a starter profile;
		// the user sees why some guesses may be off.
		return generate(doc, opts, fmt.Sprintf("the document does not validate: %s", oneLine(err.Error())))
	}
	return generate(doc, opts, "")
}

type found struct {
	method, path string
	op           *openapi3.Operation
	item         *openapi3.PathItem
}

// operations lists every operation in a stable order: path, then method.
func operations(doc *openapi3.T) []found {
	var out []found
	if doc.Paths == nil {
		return nil
	}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range keys {
		item := paths[p]
		ops := item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			out = append(out, found{method: strings.ToUpper(m), path: p, op: ops[m], item: item})
		}
	}
	return out
}

func choose(doc *openapi3.T, want string, method, path string) (found, error) {
	all := operations(doc)
	if method != "" {
		for _, f := range all {
			if f.method == strings.ToUpper(method) && f.path == path {
				return f, nil
			}
		}
		return found{}, fmt.Errorf("no operation is %s %s; the document has: %s", strings.ToUpper(method), path, candidates(all, false))
	}
	if want != "" {
		for _, f := range all {
			if f.op.OperationID == want {
				return f, nil
			}
		}
		return found{}, fmt.Errorf("no operation has operationId %q; the document has: %s", want, candidates(all, false))
	}
	var keyed []found
	for _, f := range all {
		if keyHeader(f) != "" {
			keyed = append(keyed, f)
		}
	}
	if len(keyed) == 1 {
		return keyed[0], nil
	}
	if len(keyed) > 1 {
		return found{}, fmt.Errorf("several operations declare an idempotency key; pick one with --operation: %s", candidates(keyed, false))
	}
	return found{}, fmt.Errorf("no operation declares an idempotency key header; pick the keyed one with --operation: %s", candidates(all, true))
}

func candidates(list []found, writesOnly bool) string {
	var parts []string
	for _, f := range list {
		if writesOnly && (f.method == "GET" || f.method == "HEAD" || f.method == "OPTIONS" || f.method == "DELETE") {
			continue
		}
		id := f.op.OperationID
		if id == "" {
			id = "(no operationId)"
		}
		parts = append(parts, fmt.Sprintf("%s (%s %s)", id, f.method, f.path))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// parameters is the operation's parameters with the path item's, resolved.
func parameters(f found) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	for _, list := range []openapi3.Parameters{f.item.Parameters, f.op.Parameters} {
		for _, ref := range list {
			if ref != nil && ref.Value != nil {
				out = append(out, ref.Value)
			}
		}
	}
	return out
}

// keyHeader is the name of a header parameter whose name contains "idempotency".
func keyHeader(f found) string {
	for _, p := range parameters(f) {
		if p.In == openapi3.ParameterInHeader && strings.Contains(strings.ToLower(p.Name), "idempotency") {
			return p.Name
		}
	}
	return ""
}

// keySchema is the schema the document gives the key (its header parameter's, or the body
// property keyField's), nil for none.
func keySchema(f found, keyField string) *openapi3.Schema {
	if keyField != "" {
		if body := schemaOf(f); body != nil && body.Properties[keyField] != nil {
			return body.Properties[keyField].Value
		}
		return nil
	}
	for _, p := range parameters(f) {
		if p.In == openapi3.ParameterInHeader && strings.Contains(strings.ToLower(p.Name), "idempotency") && p.Schema != nil {
			return p.Schema.Value
		}
	}
	return nil
}

// keyMaxLength is the maxLength the document gives the key, 0 for none.
func keyMaxLength(f found, keyField string) uint64 {
	s := keySchema(f, keyField)
	if s == nil || s.MaxLength == nil {
		return 0
	}
	return *s.MaxLength
}

// keyIsUUID reports whether the document gives the key `format: uuid`: a target that may
// refuse any other key, so every key the harness sends must be a UUID.
func keyIsUUID(f found, keyField string) bool {
	s := keySchema(f, keyField)
	return s != nil && strings.EqualFold(s.Format, "uuid")
}

func keyHeaderRequired(f found) bool {
	for _, p := range parameters(f) {
		if p.In == openapi3.ParameterInHeader && strings.Contains(strings.ToLower(p.Name), "idempotency") {
			return p.Required
		}
	}
	return false
}

// writer collects the profile's lines.
type writer struct{ b strings.Builder }

func (w *writer) line(format string, args ...any) { fmt.Fprintf(&w.b, format+"\n", args...) }

func generate(doc *openapi3.T, opts Options, warning string) ([]byte, error) {
	f, err := choose(doc, opts.Operation, opts.Method, opts.Path)
	if err != nil {
		return nil, err
	}
	var w writer
	source := opts.Source
	if source == "" {
		source = "an OpenAPI document"
	}
	title := ""
	if doc.Info != nil {
		title = doc.Info.Title
	}
	w.line("# idemproof target profile for %s %s (operationId %s) of %s (OpenAPI %s),", f.method, f.path, orNone(f.op.OperationID), source, doc.OpenAPI)
	w.line("# written by idemproof init. Lines marked \"# guess:\" are guesses: confirm or edit them.")
	w.line("# Every field: docs/profiles.md. Then: idemproof check --profile THIS_FILE")
	if warning != "" {
		w.line("# Note: %s", warning)
	}
	w.line("name: %s", yamlString(profileName(title, f.op.OperationID)))
	if opts.BaseURL != "" {
		w.line("base_url: %s   # where idemproof scan reached it; set API_URL to point elsewhere", yamlString("${API_URL:-"+strings.TrimSuffix(opts.BaseURL, "/")+"}"))
	} else {
		w.line("base_url: %s   # guess: the document's first server; set API_URL to point elsewhere", yamlString("${API_URL:-"+baseURL(doc)+"}"))
	}

	// The body and the entity first: the path, the key field and the ledger depend on them.
	body, bodyNote := requestBody(f)
	entityProp, entityNote := "", ""
	if obj, ok := body.(map[string]any); ok {
		entityProp, entityNote = chooseEntity(obj, schemaOf(f))
	}

	header := keyHeader(f)
	keyField := ""
	switch {
	case header != "":
		w.line("key_header: %s   # declared by the document", yamlString(header))
	default:
		if obj, ok := body.(map[string]any); ok {
			for _, k := range sortedKeys(obj) {
				if strings.Contains(strings.ToLower(k), "idempotency") {
					keyField = k
				}
			}
		}
		if keyField != "" {
			w.line("key_field: %s   # the body property named for the key; the runner writes each attempt's key there", yamlString(keyField))
		} else {
			w.line("key_header: Idempotency-Key   # guess: the document names no idempotency header or body field")
		}
	}

	path, pathNote := entityPath(f.path)
	w.line("operation:")
	w.line("  method: %s", f.method)
	w.line("  path: %s%s", yamlString(path), comment(pathNote))
	if body != nil {
		w.line("  headers: { Content-Type: application/json }")
	}
	bodyText, altered, alteredNote := bodies(body, entityProp, keyField)
	w.line("  body: %s%s", yamlString(bodyText), comment(join(bodyNote, entityNote)))
	w.line("  altered_body: %s%s", yamlString(altered), comment(alteredNote))

	ledger, ledgerNote := chooseLedger(doc, f, entityProp)
	w.line("side_effects:                     # the ledger: how many times did the operation happen for the entity?")
	w.line("  method: GET")
	w.line("  path: %s   # %s", yamlString(ledger.path), ledgerNote)
	w.line("  count: %s   # %s", yamlString(ledger.count), ledger.countNote)

	if vbody, vnote := invalidBody(body, schemaOf(f), entityProp, keyField); vbody != "" && has(f, 400) {
		w.line("validation_error:                 # a request refused before any work: it must not be stored")
		w.line("  body: %s   # %s", yamlString(vbody), vnote)
		w.line("  status: 400   # declared by the document")
	}
	if other, ok := otherOperation(doc, f, header); ok {
		ob, _ := requestBody(other)
		oentity := ""
		if obj, ok := ob.(map[string]any); ok {
			oentity, _ = chooseEntity(obj, schemaOf(other))
		}
		otext, _, _ := bodies(ob, oentity, "")
		opath, _ := entityPath(other.path)
		ol, onote := chooseLedger(doc, other, oentity)
		w.line("other_operation:                  # a second keyed operation (%s): the same key there must execute on its own", orNone(other.op.OperationID))
		w.line("  method: %s", other.method)
		w.line("  path: %s", yamlString(opath))
		w.line("  body: %s", yamlString(otext))
		w.line("  side_effects:")
		w.line("    method: GET")
		w.line("    path: %s   # %s", yamlString(ol.path), onote)
		w.line("    count: %s   # %s", yamlString(ol.count), ol.countNote)
	}
	w.line("expect:")
	w.line("  in_flight: %d   # %s", 409, declared(f, 409, "a repeat while the original runs"))
	w.line("  mismatch: 422   # %s", declared(f, 422, "the same key with another payload; Stripe-style APIs answer 400"))
	switch {
	case header != "" && keyHeaderRequired(f):
		w.line("  missing_key: \"400\"   # the key header is required by the document")
	case header != "":
		w.line("  missing_key: optional   # the key header is optional in the document")
	default:
		w.line("  missing_key: \"400\"   # guess: a request without a key is refused")
	}
	uuid := keyIsUUID(f, keyField)
	if uuid {
		w.line("  key_format: uuid   # the key's format in the document is uuid: every key the harness sends is a UUID")
	}
	switch n := keyMaxLength(f, keyField); {
	case n == 0 || n == 255 || uuid:
	case n >= 43 && n <= 4096:
		w.line("  max_key_length: %d   # the key's maxLength in the document: the long-key scenarios send keys this long", n)
	default:
		w.line("  # the document gives the key a maxLength of %d; expect.max_key_length takes 43 to 4096, so the long-key scenarios test 255", n)
	}
	if opts.UniqueField != "" {
		w.line("  unique_field: %s   # detected by idemproof scan: it differed between two executions", yamlString(opts.UniqueField))
	}
	if rh := replayHeader(f); rh != "" {
		w.line("  replay_header: %s   # a response header of the document", yamlString(rh))
	} else {
		w.line("  # replay_header: Idempotent-Replayed   # if replays carry a marker")
	}
	w.line("# retention: 24h   # your declared key window; declare it where the test deployment keeps it short (expiry scenarios wait it out)")
	return []byte(w.b.String()), nil
}

// otherOperation is another operation declaring the same key header, with a JSON body.
func otherOperation(doc *openapi3.T, chosen found, header string) (found, bool) {
	if header == "" {
		return found{}, false
	}
	for _, f := range operations(doc) {
		if f.op == chosen.op || !strings.EqualFold(keyHeader(f), header) || jsonMedia(f) == nil {
			continue
		}
		return f, true
	}
	return found{}, false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func comment(note string) string {
	if note == "" {
		return ""
	}
	return "   # " + note
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

func profileName(title, opID string) string {
	s := nonName.ReplaceAllString(strings.ToLower(strings.TrimSpace(title+" "+opID)), "-")
	s = strings.Trim(s, "-")
	if s == "" {
		return "my-api"
	}
	return s
}

// baseURL is the first server's URL with its variables at their defaults; a relative
// server URL is taken against 127.0.0.1:8080.
func baseURL(doc *openapi3.T) string {
	const local = "http://127.0.0.1:8080"
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return local
	}
	s := doc.Servers[0]
	u := s.URL
	for name, v := range s.Variables {
		if v != nil {
			u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
		}
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" || (parsed.Scheme != "http" && parsed.Scheme != "https") {
		return local + strings.TrimSuffix("/"+strings.TrimPrefix(u, "/"), "/")
	}
	return strings.TrimSuffix(u, "/")
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// entityPath turns path parameters into {{.Entity}}, so every scenario addresses a fresh
// resource.
func entityPath(p string) (string, string) {
	if !pathParam.MatchString(p) {
		return p, ""
	}
	return pathParam.ReplaceAllString(p, "{{.Entity}}"), "guess: path parameters carry the fresh entity"
}

func schemaOf(f found) *openapi3.Schema {
	mt := jsonMedia(f)
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

func jsonMedia(f found) *openapi3.MediaType {
	if f.op.RequestBody == nil || f.op.RequestBody.Value == nil {
		return nil
	}
	content := f.op.RequestBody.Value.Content
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "application/json" || strings.HasSuffix(strings.SplitN(k, ";", 2)[0], "+json") {
			return content[k]
		}
	}
	return nil
}

// requestBody is the example body: the media type's example, its first named example, the
// schema's example, else a minimal body built from the schema.
func requestBody(f found) (any, string) {
	mt := jsonMedia(f)
	if mt == nil {
		if f.op.RequestBody != nil {
			return map[string]any{}, "guess: the request body is not JSON; write it by hand"
		}
		return nil, ""
	}
	if mt.Example != nil {
		return mt.Example, "the document's example"
	}
	for _, name := range sortedKeys(mt.Examples) {
		if ex := mt.Examples[name]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
			return ex.Value.Value, "the document's example " + name
		}
	}
	if mt.Schema != nil && mt.Schema.Value != nil {
		s := mt.Schema.Value
		if s.Example != nil {
			return s.Example, "the schema's example"
		}
		if len(s.Examples) > 0 {
			return s.Examples[0], "the schema's example"
		}
		if len(s.Required) == 0 && len(s.Properties) > 0 {
			// Nothing is required: an empty object is valid but says nothing; every
			// property at its simplest value is a better start.
			out := map[string]any{}
			for name, p := range s.Properties {
				if p != nil && p.Value != nil && !p.Value.ReadOnly {
					out[name] = minimal(p.Value, 1)
				}
			}
			return out, "guess: every property of the schema at a simple value (none is required)"
		}
		return minimal(s, 0), "guess: a minimal body satisfying the schema's required properties"
	}
	return map[string]any{}, "guess: the body has no schema"
}

// minimal builds the smallest value a schema accepts that a person can recognise.
func minimal(s *openapi3.Schema, depth int) any {
	if s == nil || depth > 6 {
		return nil
	}
	switch {
	case s.Example != nil:
		return s.Example
	case len(s.Examples) > 0:
		return s.Examples[0]
	case s.Default != nil:
		return s.Default
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	if len(s.AllOf) > 0 {
		out := map[string]any{}
		for _, part := range s.AllOf {
			if m, ok := minimal(part.Value, depth+1).(map[string]any); ok {
				for k, v := range m {
					out[k] = v
				}
			}
		}
		return out
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		if len(alts) > 0 && alts[0].Value != nil {
			return minimal(alts[0].Value, depth+1)
		}
	}
	types := s.Type
	switch {
	case types.Includes("object") || (types.IsEmpty() && len(s.Properties) > 0):
		out := map[string]any{}
		for _, name := range s.Required {
			if p := s.Properties[name]; p != nil {
				out[name] = minimal(p.Value, depth+1)
			} else {
				out[name] = "value"
			}
		}
		return out
	case types.Includes("array"):
		if s.MinItems > 0 && s.Items != nil {
			return []any{minimal(s.Items.Value, depth+1)}
		}
		return []any{}
	case types.Includes("integer"):
		if s.Min != nil {
			return int64(*s.Min) + 1
		}
		return 1
	case types.Includes("number"):
		if s.Min != nil {
			return *s.Min + 1
		}
		return 1.5
	case types.Includes("boolean"):
		return false
	case types.Includes("string"):
		switch s.Format {
		case "date":
			return "2026-01-01"
		case "date-time":
			return "2026-01-01T00:00:00Z"
		case "email":
			return "user@example.com"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		case "uri", "url":
			return "https://example.com/"
		}
		return strings.Repeat("x", max(1, int(s.MinLength)))
	}
	return nil
}

// chooseEntity picks the string property that gets {{.Entity}}: the first one named like
// an id of the thing acted on (order_id, account_id, …), else one named id or name, else
// the first string property.
func chooseEntity(body map[string]any, s *openapi3.Schema) (string, string) {
	// Free-form strings only: a date, an email or an enum value cannot hold an entity.
	constrained := func(k string) bool {
		if s == nil || s.Properties[k] == nil || s.Properties[k].Value == nil {
			return false
		}
		p := s.Properties[k].Value
		return p.Format != "" || len(p.Enum) > 0 || p.Const != nil || p.Pattern != ""
	}
	var strs []string
	for _, k := range sortedKeys(body) {
		if _, ok := body[k].(string); ok && !strings.Contains(strings.ToLower(k), "idempotency") && !constrained(k) {
			strs = append(strs, k)
		}
	}
	if len(strs) == 0 && s != nil {
		// No string property in the example: take one from the schema.
		for _, k := range sortedKeys(s.Properties) {
			if p := s.Properties[k]; p != nil && p.Value != nil && p.Value.Type.Includes("string") && !constrained(k) {
				body[k] = ""
				strs = append(strs, k)
				break
			}
		}
	}
	for _, k := range strs {
		l := strings.ToLower(k)
		if l != "id" && (strings.HasSuffix(l, "_id") || strings.HasSuffix(l, "id") && len(l) > 2 || strings.Contains(l, "reference")) {
			return k, "guess: " + k + " carries the fresh entity"
		}
	}
	for _, k := range strs {
		if l := strings.ToLower(k); l == "id" || l == "name" {
			return k, "guess: " + k + " carries the fresh entity"
		}
	}
	if len(strs) > 0 {
		return strs[0], "guess: " + strs[0] + " carries the fresh entity"
	}
	return "", "guess: no string property to carry the fresh entity; put {{.Entity}} where the ledger can find it"
}

// bodies renders the body with the entity placeholder, and the altered body: the first
// number changed, else a string other than the entity changed, else an added property.
func bodies(body any, entity, keyField string) (string, string, string) {
	if body == nil {
		return "", "", "the operation takes no body: the scenarios that send another payload are N/A"
	}
	obj, isObj := body.(map[string]any)
	if !isObj {
		b, _ := json.Marshal(body)
		return string(b), string(b) + " ", "guess: edit to another payload for the same entity"
	}
	orig := cloneMap(obj)
	if keyField != "" {
		delete(orig, keyField) // the runner writes the key there
	}
	if entity != "" {
		orig[entity] = "{{.Entity}}"
	}
	alt := cloneMap(orig)
	note := ""
	for _, k := range sortedKeys(alt) {
		switch v := alt[k].(type) {
		case float64:
			alt[k], note = v+1, "guess: "+k+" changed"
		case int, int64:
			alt[k], note = toInt(v)+1, "guess: "+k+" changed"
		}
		if note != "" {
			break
		}
	}
	if note == "" {
		for _, k := range sortedKeys(alt) {
			if s, ok := alt[k].(string); ok && k != entity {
				alt[k], note = s+"-altered", "guess: "+k+" changed"
				break
			}
		}
	}
	if note == "" {
		alt["idemproof_altered"], note = true, "guess: an added property; use a field the API checks"
	}
	return marshal(orig), marshal(alt), note
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	}
	return 0
}

// marshal writes compact JSON with the keys sorted, keeping the template placeholder
// readable ({{.Entity}} is not escaped).
func marshal(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), `\u003c`, "<")
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// invalidBody is the body with one property set just outside its schema: a number below
// its minimum, else a required string emptied below its minLength.
func invalidBody(body any, s *openapi3.Schema, entity, keyField string) (string, string) {
	obj, ok := body.(map[string]any)
	if !ok || s == nil {
		return "", ""
	}
	for _, k := range sortedKeys(s.Properties) {
		p := s.Properties[k]
		if k == entity || k == keyField || p == nil || p.Value == nil || p.Value.Min == nil {
			continue
		}
		if _, present := obj[k]; !present || !(p.Value.Type.Includes("integer") || p.Value.Type.Includes("number")) {
			continue
		}
		bad := cloneMap(obj)
		if keyField != "" {
			delete(bad, keyField)
		}
		if entity != "" {
			bad[entity] = "{{.Entity}}"
		}
		bad[k] = *p.Value.Min - 5
		return marshal(bad), fmt.Sprintf("guess: %s below its minimum %v", k, *p.Value.Min)
	}
	return "", ""
}

type ledger struct{ path, count, countNote string }

// chooseLedger finds a GET on the operation's path (a collection read) with a query
// parameter for the entity property, and how its answer counts effects.
func chooseLedger(doc *openapi3.T, f found, entity string) (ledger, string) {
	param := entity
	if param == "" {
		param = "entity"
	}
	path, _ := entityPath(f.path)
	l := ledger{path: path + "?" + param + "={{.Entity}}", count: "data.#",
		countNote: "guess: the length of a data array; or a JSON path to a count"}
	note := "guess: no GET on " + f.path + " lists the effects; point this at whatever counts them"
	if f.item.Get != nil {
		note = "guess: the GET on the same path, filtered by " + param
		for _, p := range parameters(found{op: f.item.Get, item: f.item}) {
			if p.In == openapi3.ParameterInQuery && strings.EqualFold(p.Name, param) {
				note = "the GET on the same path, with its " + p.Name + " query parameter"
			}
		}
		if c, cnote := countPath(f.item.Get); c != "" {
			l.count, l.countNote = c, cnote
		}
	}
	return l, note
}

// countPath reads the 200 answer's schema: a count/total integer, an array property, or
// an array itself.
func countPath(get *openapi3.Operation) (string, string) {
	if get.Responses == nil {
		return "", ""
	}
	r := get.Responses.Status(200)
	if r == nil || r.Value == nil {
		return "", ""
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return "", ""
	}
	s := mt.Schema.Value
	if s.Type.Includes("array") {
		return "#", "the answer is an array: its length"
	}
	for _, name := range []string{"count", "total", "total_count", "totalCount"} {
		if p := s.Properties[name]; p != nil && p.Value != nil && p.Value.Type.Includes("integer") {
			return name, "the answer's " + name + " property"
		}
	}
	for _, name := range sortedKeys(s.Properties) {
		if p := s.Properties[name]; p != nil && p.Value != nil && p.Value.Type.Includes("array") {
			return name + ".#", "the length of the answer's " + name + " array"
		}
	}
	return "", ""
}

func has(f found, status int) bool {
	return f.op.Responses != nil && f.op.Responses.Value(fmt.Sprint(status)) != nil
}

func declared(f found, status int, what string) string {
	if has(f, status) {
		return fmt.Sprintf("declared by the document (%s)", what)
	}
	return fmt.Sprintf("guess: the document declares no %d (%s)", status, what)
}

func replayHeader(f found) string {
	if f.op.Responses == nil {
		return ""
	}
	var names []string
	for _, r := range f.op.Responses.Map() {
		if r == nil || r.Value == nil {
			continue
		}
		for name := range r.Value.Headers {
			if strings.Contains(strings.ToLower(name), "replay") && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// yamlString single-quotes s for YAML unless it is plain safe text.
func yamlString(s string) string {
	if s != "" && regexp.MustCompile(`^[A-Za-z0-9_./-]+$`).MatchString(s) && !strings.HasPrefix(s, "-") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
