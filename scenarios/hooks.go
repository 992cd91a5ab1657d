package scenarios

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// hookData is what {{...}} in a test hook's value, query values and path can see.
type hookData struct {
	Entity string
	HoldMs int64  // the hold in milliseconds: slow_operation's, or 2 × lock_timeout past the lock
	Value  string // the hook's value: fail_operation's status, the crash point's value
}

// stepHook is a test hook resolved for one step: what to add to its request.
type stepHook struct {
	header, value string      // a header to set ("" = none)
	extra         [][2]string // more headers to set (a second hook on the request)
	query         url.Values  // query parameters to add
	path          string      // a path replacing the operation's ("" = keep it)
}

// hookForm is the shape shared by every hook: one of header, query or path.
type hookForm struct {
	header string
	query  map[string]string
	path   string
}

func (h *TestHook) form() hookForm  { return hookForm{h.Header, h.Query, h.Path} }
func (c *CrashHook) form() hookForm { return hookForm{c.Header, c.Query, c.Path} }

// hold is how long the slow hook holds the work: hold, else value read as a duration.
func (h *TestHook) hold() time.Duration {
	if h.Hold > 0 {
		return h.Hold.Std()
	}
	d, _ := parseDuration(h.Value)
	return d.Std()
}

// stepHook resolves the step's hook against the profile; false when the step asks for
// none or the profile does not declare it. HookSlowFail is the slow hook with the fail
// hook's header, query or path added (CapSlowFail has ruled out the two colliding).
func (t *target) stepHook(h Hook, entity string) (stepHook, bool, error) {
	if h == HookSlowFail {
		slow, ok, err := t.stepHook(HookSlow, entity)
		if err != nil || !ok {
			return slow, ok, err
		}
		fail, ok, err := t.stepHook(HookFail, entity)
		if err != nil || !ok {
			return fail, ok, err
		}
		return slow.with(fail), true, nil
	}
	return t.singleHook(h, entity)
}

// with is h and o on one request; o's header or path where h has none, their queries
// together.
func (h stepHook) with(o stepHook) stepHook {
	out := h
	if out.header == "" {
		out.header, out.value = o.header, o.value
	} else if o.header != "" {
		out.extra = append(out.extra, [2]string{o.header, o.value})
	}
	if out.path == "" {
		out.path = o.path
	}
	if len(o.query) > 0 {
		q := url.Values{}
		for k, v := range h.query {
			q[k] = v
		}
		for k, v := range o.query {
			q[k] = v
		}
		out.query = q
	}
	return out
}

// singleHook resolves one of the profile's hooks.
func (t *target) singleHook(h Hook, entity string) (stepHook, bool, error) {
	p := t.p
	var form hookForm
	data := hookData{Entity: entity}
	value := ""
	switch {
	case (h == HookSlow || h == HookSlowPastLock || h == HookSlowPastTimeout) && p.Slow != nil:
		form, value = p.Slow.form(), p.Slow.Value
		hold := p.Slow.hold()
		if h == HookSlowPastLock || h == HookSlowPastTimeout {
			hold = 2 * p.LockTimeout.Std()
			if h == HookSlowPastTimeout {
				hold = t.giveUpHold()
			}
			if !strings.Contains(value, "{{") {
				// A plain header value is the hold as a duration: send the longer one.
				value = hold.String()
			}
		}
		data.HoldMs = hold.Milliseconds()
	case h == HookFail && p.FailHook != nil:
		form, value = p.FailHook.form(), p.FailHook.Value
	case h == HookCrashAfterKey && p.Crash != nil:
		form, value = p.Crash.form(), p.Crash.AfterKey
	case h == HookCrashAfterCommit && p.Crash != nil:
		form, value = p.Crash.form(), p.Crash.AfterCommit
	default:
		return stepHook{}, false, nil
	}
	data.Value = value
	var out stepHook
	var err error
	if form.header != "" {
		out.header = form.header
		if out.value, err = renderHook(value, data); err != nil {
			return out, false, fmt.Errorf("render hook value: %w", err)
		}
	}
	if len(form.query) > 0 {
		out.query = url.Values{}
		for _, k := range sortedNames(form.query) {
			v, err := renderHook(form.query[k], data)
			if err != nil {
				return out, false, fmt.Errorf("render hook query %s: %w", k, err)
			}
			out.query.Set(k, v)
		}
	}
	if form.path != "" {
		if out.path, err = renderHook(form.path, data); err != nil {
			return out, false, fmt.Errorf("render hook path: %w", err)
		}
	}
	return out, true, nil
}

// onPath applies the hook's path and query to the operation's rendered path.
func (h stepHook) onPath(path string) string {
	if h.path != "" {
		path = h.path
	}
	if len(h.query) == 0 {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + h.query.Encode()
}

func renderHook(s string, d hookData) (string, error) { return execTemplate(s, d) }

// checkHookForm validates one hook's shape: exactly one of header, query, path, each a
// template that renders with sample data. valueRequired: the header form needs value.
func checkHookForm(path string, f hookForm, value string, valueRequired bool) []fieldError {
	var errs []fieldError
	add := func(p, format string, args ...any) {
		errs = append(errs, fieldError{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	forms := 0
	for _, set := range []bool{f.header != "", len(f.query) > 0, f.path != ""} {
		if set {
			forms++
		}
	}
	switch {
	case forms == 0:
		add(path, "set how a request switches the hook on: header (with value), query (e.g. {ms: \"{{.HoldMs}}\"}) or path (e.g. /slow?ms={{.HoldMs}})")
	case forms > 1:
		add(path, "set one of header, query and path, not several")
	}
	sample := hookData{Entity: "ip-sample-1", HoldMs: 400, Value: "sample"}
	check := func(p, s string) {
		if _, err := renderHook(s, sample); err != nil {
			add(p, "template: %s (available: {{.HoldMs}}, {{.Value}}, {{.Entity}})", strings.TrimPrefix(err.Error(), "template: "))
		}
	}
	if f.header != "" {
		if strings.ContainsAny(f.header, " :\t\r\n") {
			add(path+".header", "must be a header name such as X-Test-Delay, got %q", f.header)
		}
		if valueRequired && value == "" {
			add(path+".value", "required with header: the header's value")
		}
	}
	if value != "" {
		check(path+".value", value)
	}
	for _, k := range sortedNames(f.query) {
		if k == "" {
			add(path+".query", "a query parameter needs a name")
			continue
		}
		check(path+".query."+k, f.query[k])
	}
	if f.path != "" {
		if !strings.HasPrefix(f.path, "/") {
			add(path+".path", "must start with /, e.g. /slow?ms={{.HoldMs}}, got %q", f.path)
		} else {
			check(path+".path", f.path)
		}
	}
	return errs
}

// checkSlowHook adds what only slow_operation needs: a hold it can be measured by.
func checkSlowHook(h *TestHook) []fieldError {
	errs := checkHookForm("slow_operation", h.form(), h.Value, true)
	if h.Hold > 0 {
		return errs
	}
	if _, err := parseDuration(h.Value); err != nil {
		msg := "must be a duration the target holds the work for, e.g. 400ms"
		if h.Value == "" || strings.Contains(h.Value, "{{") {
			errs = append(errs, fieldError{Path: "slow_operation.hold", Msg: "required unless value is a duration: how long the target holds the work, e.g. 400ms"})
		} else {
			errs = append(errs, fieldError{Path: "slow_operation.value", Msg: fmt.Sprintf("%s: %v (or set hold)", msg, err)})
		}
	}
	return errs
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// failStatus is the 5xx fail_operation asks the target to fail with, when its value is
// one (a hook whose value is not a status, e.g. ?fail=true, declares none).
func (p *Profile) failStatus() (int, bool) {
	if p.FailHook == nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.FailHook.Value))
	return n, err == nil && n >= 500 && n <= 599
}
