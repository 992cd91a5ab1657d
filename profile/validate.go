package profile

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/internal/jsonvalue"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport/contentcoding"
)

// The range of expect.max_key_length.
const (
	minMaxKeyLength = 43
	maxMaxKeyLength = 4096
)

// The values of expect.key_format.
const (
	KeyFormatFreeForm = "free-form"
	KeyFormatUUID     = "uuid"
)

// UUIDKeys reports whether every key the runner sends must be a UUID (expect.key_format).
func (p *Profile) UUIDKeys() bool { return p.Expect.KeyFormat == KeyFormatUUID }

// MaxKeyLen is the longest key the API accepts: expect.max_key_length, else 255 (Stripe).
func (p *Profile) MaxKeyLen() int {
	if p.Expect.MaxKeyLength > 0 {
		return p.Expect.MaxKeyLength
	}
	return 255
}

// Validate reports everything wrong with the profile at once (errors.Join), each error
// naming the field. Profiles from Load and Parse are already valid; Validate is
// for profiles built or changed in Go.
func (p *Profile) Validate() error {
	if errs := p.fieldErrors(); len(errs) > 0 {
		return joinFieldErrors("", errs, nil)
	}
	return nil
}

func (p *Profile) fieldErrors() []fieldError {
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if p.BaseURL == "" && (p.Proxy == nil || p.Proxy.URL == "") {
		add("base_url", "required: the target's URL, e.g. http://127.0.0.1:8080")
	} else if p.BaseURL != "" {
		if msg := checkHTTPURL(p.BaseURL); msg != "" {
			add("base_url", "%s", msg)
		}
	}
	if p.KeyHeader != "" && p.KeyField != "" {
		add("key_field", "set key_header or key_field, not both (the key travels in one place)")
	}
	if p.KeyHeader != "" && strings.ContainsAny(p.KeyHeader, " :\t\r\n") {
		add("key_header", "must be a header name such as Idempotency-Key, got %q", p.KeyHeader)
	}
	if p.KeyField != "" && !validFieldPath(p.KeyField) {
		add("key_field", "must be a dotted JSON path such as params.arguments.idempotency_key, got %q", p.KeyField)
	}
	errs = append(errs, checkOperation("operation", p.Operation, p.KeyField != "" || p.IsMCP())...)
	errs = append(errs, checkProbe("side_effects", p.SideEffects)...)
	errs = append(errs, checkEntity(p.Entity, p.Operation)...)
	errs = append(errs, checkDownstream(p.Downstream)...)
	errs = append(errs, checkStore(p.Store)...)
	errs = append(errs, checkTLS(p.TLS)...)
	if p.Other != nil {
		errs = append(errs, checkOperation("other_operation", p.Other.Operation, p.KeyField != "" || p.IsMCP())...)
		errs = append(errs, checkProbe("other_operation.side_effects", p.Other.SideEffects)...)
	}
	switch {
	case p.Expect.InFlightWait && p.Expect.InFlight != 0:
		add("expect.in_flight", "declares both a status (%d) and %q: a repeat is either refused or made to wait", p.Expect.InFlight, InFlightWaitValue)
	case !p.Expect.InFlightWait && !is4xx(p.Expect.InFlight):
		add("expect.in_flight", "must be a 4xx status (409 in draft-07 and Stripe) or %q, got %d", InFlightWaitValue, p.Expect.InFlight)
	}
	if n := p.Expect.MaxKeyLength; n != 0 && (n < minMaxKeyLength || n > maxMaxKeyLength) {
		add("expect.max_key_length", "must be from %d (every key shape the harness sends must fit: base64url keys are 43 characters) to %d, got %d", minMaxKeyLength, maxMaxKeyLength, n)
	}
	switch p.Expect.KeyFormat {
	case "", KeyFormatFreeForm, KeyFormatUUID:
	default:
		add("expect.key_format", "must be %s (the default: keys of any shape) or %s (every key a UUID, for a target that accepts nothing else), got %q", KeyFormatFreeForm, KeyFormatUUID, p.Expect.KeyFormat)
	}
	if f := p.Expect.UniqueField; f != "" && (!validFieldPath(f) || strings.ContainsAny(f, " \t\r\n")) {
		add("expect.unique_field", "must be a JSON path to a value minted per execution, such as id or data.decline_id, got %q", f)
	}
	for i, f := range p.Expect.VolatileFields {
		switch {
		case f == "" || !validFieldPath(f) || strings.ContainsAny(f, " \t\r\n"):
			add(fmt.Sprintf("expect.volatile_fields[%d]", i), "must be a JSON path to a member that differs in every response, such as request_id or meta.served_at, got %q", f)
		case f == p.Expect.UniqueField:
			add(fmt.Sprintf("expect.volatile_fields[%d]", i), "%q is also expect.unique_field: a value minted per execution is the same in a replay, a volatile one is not; it cannot be both", f)
		}
	}
	if !p.Expect.InFlightWait && p.Expect.InFlight != 0 && p.Expect.InFlight == p.Expect.Mismatch &&
		!p.Outcomes.Covers(outcome.InFlight) && !p.Outcomes.Covers(outcome.Mismatch) {
		add("expect.mismatch", "is %d, as expect.in_flight is: an answer of that status cannot be told to be one or the other; add outcomes: rules that tell them apart by the body or a header, e.g. in_flight: {status: %d, json: {path: error.code, equals: key_in_use}} or mismatch: {status: %d, header: {name: Idempotency-Outcome, equals: conflict}} (see \"Outcome rules\")", p.Expect.Mismatch, p.Expect.InFlight, p.Expect.Mismatch)
	}
	if !p.Expect.InFlightWait && p.Expect.InFlight != 0 && p.Expect.InFlight == p.Expect.Mismatch {
		errs = append(errs, checkSharedStatusRules(p)...)
	}
	errs = append(errs, checkFingerprintIgnores(p)...)
	errs = append(errs, checkEntitySetup(p)...)
	switch p.Expect.ReplayBody {
	case "", "bytes", "json":
	default:
		add("expect.replay_body", "must be bytes (a replay is the stored response byte for byte) or json (the same JSON value, members in any order), got %q", p.Expect.ReplayBody)
	}
	for field, body := range map[string]string{"expect.in_flight_body": p.Expect.InFlightBody, "expect.mismatch_body": p.Expect.MismatchBody} {
		if len(body) > maxRefusalBody {
			add(field, "must be at most %d bytes (the body the API sends with that status), got %d", maxRefusalBody, len(body))
		}
	}
	if s := p.Expect.ReplayStatus; s != 0 && (s < 200 || s > 299) {
		add("expect.replay_status", "must be a 2xx status (the status a replay of a success answers with, e.g. 200 after a 201), got %d", s)
	}
	if !is4xx(p.Expect.Mismatch) {
		add("expect.mismatch", "must be a 4xx status (422 in draft-07, 400 at Stripe), got %d", p.Expect.Mismatch)
	}
	if p.Expect.MissingKey != "optional" {
		if n, err := strconv.Atoi(p.Expect.MissingKey); err != nil || !is4xx(n) {
			add("expect.missing_key", "must be a 4xx status or \"optional\", got %q", p.Expect.MissingKey)
		}
	}
	for i, h := range p.Expect.ReplayHeaders {
		if h == "" {
			add(fmt.Sprintf("expect.replay_headers[%d]", i), "must be a header name, got \"\"")
		}
	}
	if p.ClientTimeout <= 0 {
		add("client_timeout", "must be positive, e.g. 2s")
	}
	if p.ClientPatience < 0 {
		add("client_patience", "must be positive, e.g. 60s (or left out: 60s)")
	}
	if p.RetryAfterCap < 0 {
		add("retry_after_cap", "must be positive, e.g. 60s (or left out: a client may cap a hint at 60s, and wait longer)")
	}
	if p.Slow != nil {
		errs = append(errs, checkSlowHook(p.Slow)...)
	}
	if p.FailHook != nil {
		errs = append(errs, checkHookForm("fail_operation", p.FailHook.Form(), p.FailHook.Value, true)...)
	}
	if p.Crash != nil {
		errs = append(errs, checkHookForm("crash", p.Crash.Form(), "", false)...)
		if p.Crash.AfterKey == "" && p.Crash.AfterCommit == "" {
			add("crash", "set after_key and/or after_commit (the value for each crash point)")
		}
	}
	errs = append(errs, checkHookFields(p)...)
	errs = append(errs, checkKeyedMethods(p)...)
	for i, pr := range p.Principals {
		if len(pr) == 0 {
			add(fmt.Sprintf("principals[%d]", i), "must set at least one header, e.g. {Authorization: \"Bearer ...\"}")
		}
		errs = append(errs, checkAcceptEncoding(fmt.Sprintf("principals[%d]", i), pr)...)
		errs = append(errs, checkHeaderTemplates(fmt.Sprintf("principals[%d]", i), pr)...)
	}
	for name, ex := range map[string]*Example{"business_error": p.Business, "validation_error": p.Validation} {
		if ex == nil {
			continue
		}
		if ex.Body == "" {
			add(name+".body", "required: a request body the target answers with status")
		} else if err := checkTemplate(ex.Body, p.KeyField != ""); err != "" {
			add(name+".body", "%s", err)
		}
		if !is4xx(ex.Status) {
			add(name+".status", "must be a 4xx status, got %d", ex.Status)
		}
	}
	if p.Proxy != nil {
		if msg := checkHTTPURL(p.Proxy.URL); msg != "" {
			add("proxy.url", "%s", msg)
		}
		if msg := checkHTTPURL(p.Proxy.Admin); msg != "" {
			add("proxy.admin", "%s", msg)
		}
	}
	return p.transportFieldErrors(errs)
}

func checkOperation(path string, op Operation, bodyIsJSON bool) []fieldError {
	var errs []fieldError
	if op.Method == "" {
		errs = append(errs, fieldError{Path: path + ".method", Msg: "required, e.g. POST"})
	}
	if !strings.HasPrefix(op.Path, "/") {
		errs = append(errs, fieldError{Path: path + ".path", Msg: fmt.Sprintf("must start with /, got %q", op.Path)})
	} else if msg := checkTemplate(op.Path, false); msg != "" {
		errs = append(errs, fieldError{Path: path + ".path", Msg: msg})
	}
	if msg := checkTemplate(op.Body, bodyIsJSON); msg != "" {
		errs = append(errs, fieldError{Path: path + ".body", Msg: msg})
	}
	errs = append(errs, checkAcceptEncoding(path+".headers", op.Headers)...)
	errs = append(errs, checkHeaderTemplates(path+".headers", op.Headers)...)
	if op.AlteredBody != "" {
		if msg := checkTemplate(op.AlteredBody, bodyIsJSON); msg != "" {
			errs = append(errs, fieldError{Path: path + ".altered_body", Msg: msg})
		} else if op.AlteredBody == op.Body {
			errs = append(errs, fieldError{Path: path + ".altered_body", Msg: "must differ from body (it is the other payload for the same key)"})
		}
	}
	return errs
}

// checkAcceptEncoding refuses an Accept-Encoding that lets the target pick a coding the
// checks cannot undo: its answers could then not be compared (package contentcoding).
// checkHeaderTemplates checks the templates in header values ({{.Entity}}, {{.Nonce}}).
func checkHeaderTemplates(path string, headers map[string]string) []fieldError {
	var errs []fieldError
	for _, name := range sortedNames(headers) {
		if msg := checkHeaderTemplate(headers[name]); msg != "" {
			errs = append(errs, fieldError{Path: path + "." + name, Msg: msg})
		}
	}
	return errs
}

func checkAcceptEncoding(path string, headers map[string]string) []fieldError {
	for name, value := range headers {
		if !strings.EqualFold(name, "Accept-Encoding") {
			continue
		}
		for _, item := range strings.Split(value, ",") {
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if q, err := strconv.ParseFloat(strings.TrimPrefix(strings.ReplaceAll(params, " ", ""), "q="), 64); err == nil && q == 0 {
				continue // refused, not asked for
			}
			switch {
			case coding == "" || contentcoding.IsSupported(coding):
			case coding == "*":
				return []fieldError{{Path: path + "." + name, Msg: fmt.Sprintf("%q lets the target choose any coding: name only ones idemproof decodes (gzip, deflate), or leave the header out", value)}}
			default:
				return []fieldError{{Path: path + "." + name, Msg: fmt.Sprintf("asks for %q, which idemproof does not decode, so two answers could not be compared: ask only for gzip or deflate, or leave the header out", coding)}}
			}
		}
	}
	return nil
}

func checkProbe(path string, pr Probe) []fieldError {
	if pr.Tool != "" {
		return checkToolProbe(path, pr)
	}
	var errs []fieldError
	if !strings.HasPrefix(pr.Path, "/") {
		errs = append(errs, fieldError{Path: path + ".path", Msg: fmt.Sprintf("must start with / (the ledger read, e.g. /v1/refunds?order_id={{.Entity}}), got %q", pr.Path)})
	} else if msg := checkTemplate(pr.Path, false); msg != "" {
		errs = append(errs, fieldError{Path: path + ".path", Msg: msg})
	} else if pr.Scope != ScopeGlobal && !strings.Contains(pr.Path, "{{") && !strings.Contains(pr.Body, "{{") {
		where := "must contain {{.Entity}}"
		if pr.Body != "" {
			where = "or " + path + ".body must contain {{.Entity}}"
		}
		errs = append(errs, fieldError{Path: path + ".path", Msg: where + ": the ledger is read per fresh entity (or set scope: global for one count of every effect)"})
	}
	if pr.Body != "" {
		if m := strings.ToUpper(pr.Method); m == "GET" || m == "HEAD" {
			errs = append(errs, fieldError{Path: path + ".body", Msg: fmt.Sprintf("a %s carries no body: a ledger read with a body (a JSON-RPC counting method) is method: POST", m)})
		} else if msg := checkTemplate(pr.Body, false); msg != "" {
			errs = append(errs, fieldError{Path: path + ".body", Msg: msg})
		}
	}
	if pr.Scope != "" && pr.Scope != ScopeEntity && pr.Scope != ScopeGlobal {
		errs = append(errs, fieldError{Path: path + ".scope", Msg: fmt.Sprintf("must be %q (the default: a count per entity) or %q (one count of every effect), got %q", ScopeEntity, ScopeGlobal, pr.Scope)})
	}
	if pr.Count == "" {
		errs = append(errs, fieldError{Path: path + ".count", Msg: "required: a gjson path to the count, e.g. count or data.# (array length)"})
	}
	return errs
}

func checkHTTPURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("must be an http(s) URL such as http://127.0.0.1:8080, got %q", s)
	}
	return ""
}

func validFieldPath(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range jsonvalue.SplitPath(s) {
		if part == "" {
			return false
		}
	}
	return true
}

func is4xx(n int) bool { return n >= 400 && n <= 499 }

// maxRefusalBody bounds expect.in_flight_body and expect.mismatch_body.
const maxRefusalBody = 64 << 10
