package scan

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// mutating are the methods an OpenAPI scan lists: the ones that may change something.
var mutating = []string{"POST", "PUT", "PATCH", "DELETE"}

// enumerateOpenAPI lists every mutating operation of an OpenAPI document (3.0 or 3.1,
// JSON or YAML, read with kin-openapi; $refs to other local files are followed, never to
// URLs), in path order, then method order.
func enumerateOpenAPI(_ context.Context, cfg *Config) (*Target, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--base-url %q: want where the API answers, an http(s) URL such as http://127.0.0.1:8080", cfg.BaseURL)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = openapi3.ReadFromFile // local files only: a scan fetches nothing it was not pointed at
	doc, err := loader.LoadFromFile(cfg.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("--openapi %s: %w", cfg.OpenAPI, err)
	}
	t := &Target{Kind: KindOpenAPI, Source: cfg.OpenAPI, Endpoint: strings.TrimSuffix(cfg.BaseURL, "/")}
	if doc.Info != nil {
		t.Server = strings.TrimSpace(doc.Info.Title + " " + doc.Info.Version)
	}
	if err := doc.Validate(loader.Context, openapi3.DisableExamplesValidation()); err != nil {
		t.Notes = append(t.Notes, "the document does not validate: "+strings.Join(strings.Fields(err.Error()), " "))
	}
	if doc.Paths == nil {
		return t, nil
	}
	paths := doc.Paths.Map()
	for _, p := range sortedNames(paths) {
		item := paths[p]
		for _, m := range mutating {
			op := item.GetOperation(m)
			if op == nil {
				continue
			}
			t.Operations = append(t.Operations, httpOperation(m, p, item, op))
		}
	}
	return t, nil
}

// httpOperation is what the document says of one operation.
func httpOperation(method, path string, item *openapi3.PathItem, o *openapi3.Operation) *Operation {
	op := &Operation{Name: o.OperationID, Method: method, Path: path, Description: o.Summary}
	if op.Name == "" {
		op.Name = method + " " + path
	}
	if op.Description == "" {
		op.Description = o.Description
	}
	op.Destructive = method == "DELETE"
	if method == "PUT" || method == "DELETE" {
		op.IdempotentClaim = method + " (idempotent by its method, RFC 9110 §9.2.2)"
	}
	params := parameters(item, o)
	body, media := jsonBody(o)
	op.src = &source{input: body, params: params, media: media}
	op.Inputs = inputs(body, "body", params)
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		op.src.bodyExample = bodyExample(o.RequestBody.Value.Content.Get(media))
	}
	op.Key = operationKey(params, body)
	op.Request, op.Problem = httpRequest(op)
	return op
}

// parameters are the operation's parameters over its path item's (the operation's win
// for the same name and place), resolved.
func parameters(item *openapi3.PathItem, o *openapi3.Operation) []*openapi3.Parameter {
	byKey := map[string]*openapi3.Parameter{}
	var order []string
	for _, list := range []openapi3.Parameters{item.Parameters, o.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			k := ref.Value.In + " " + ref.Value.Name
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = ref.Value
		}
	}
	out := make([]*openapi3.Parameter, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// jsonBody is the schema of the operation's JSON request body and its media type; the
// media type alone when the body is not JSON; both empty without a body.
func jsonBody(o *openapi3.Operation) (*openapi3.Schema, string) {
	if o.RequestBody == nil || o.RequestBody.Value == nil {
		return nil, ""
	}
	content := o.RequestBody.Value.Content
	names := sortedNames(content)
	for _, k := range names {
		base := strings.TrimSpace(strings.SplitN(k, ";", 2)[0])
		if base == "application/json" || strings.HasSuffix(base, "+json") {
			if mt := content[k]; mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
				return mt.Schema.Value, k
			}
			return &openapi3.Schema{}, k
		}
	}
	if len(names) > 0 {
		return nil, names[0]
	}
	return nil, ""
}

// bodyExample is the media type's own example (or its first named one): a whole body
// the document's author wrote, better than anything built from the schema.
func bodyExample(mt *openapi3.MediaType) map[string]any {
	if mt == nil {
		return nil
	}
	if m, ok := mt.Example.(map[string]any); ok {
		return m
	}
	names := make([]string, 0, len(mt.Examples))
	for k := range mt.Examples {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if ex := mt.Examples[k]; ex != nil && ex.Value != nil {
			if m, ok := ex.Value.Value.(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}
