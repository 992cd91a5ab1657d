package profile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// HookData is what {{...}} in a test hook's value, query values and path can see.
type HookData struct {
	Entity string
	HoldMs int64  // the hold in milliseconds: slow_operation's, or 2 × lock_timeout past the lock
	Value  string // the hook's value: fail_operation's status, the crash point's value
}

// HookForm is the shape shared by every hook: one of header, query or path.
type HookForm struct {
	Header string
	Query  map[string]string
	Path   string
}

func (h *TestHook) Form() HookForm { return HookForm{h.Header, h.Query, h.Path} }

func (c *CrashHook) Form() HookForm { return HookForm{c.Header, c.Query, c.Path} }

// HoldDuration is how long the slow hook holds the work: hold, else value read as a duration.
func (h *TestHook) HoldDuration() time.Duration {
	if h.Hold > 0 {
		return h.Hold.Std()
	}
	d, _ := parseDuration(h.Value)
	return d.Std()
}

func RenderHook(s string, d HookData) (string, error) { return execTemplate(s, d) }

// checkHookForm validates one hook's shape: exactly one of header, query, path, each a
// template that renders with sample data. valueRequired: the header form needs value.
func checkHookForm(path string, f HookForm, value string, valueRequired bool) []fieldError {
	var errs []fieldError
	add := func(p, format string, args ...any) {
		errs = append(errs, fieldError{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	forms := 0
	for _, set := range []bool{f.Header != "", len(f.Query) > 0, f.Path != ""} {
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
	sample := HookData{Entity: "ip-sample-1", HoldMs: 400, Value: "sample"}
	check := func(p, s string) {
		if _, err := RenderHook(s, sample); err != nil {
			add(p, "template: %s (available: {{.HoldMs}}, {{.Value}}, {{.Entity}})", strings.TrimPrefix(err.Error(), "template: "))
		}
	}
	if f.Header != "" {
		if strings.ContainsAny(f.Header, " :\t\r\n") {
			add(path+".header", "must be a header name such as X-Test-Delay, got %q", f.Header)
		}
		if valueRequired && value == "" {
			add(path+".value", "required with header: the header's value")
		}
	}
	if value != "" {
		check(path+".value", value)
	}
	for _, k := range sortedNames(f.Query) {
		if k == "" {
			add(path+".query", "a query parameter needs a name")
			continue
		}
		check(path+".query."+k, f.Query[k])
	}
	if f.Path != "" {
		if !strings.HasPrefix(f.Path, "/") {
			add(path+".path", "must start with /, e.g. /slow?ms={{.HoldMs}}, got %q", f.Path)
		} else {
			check(path+".path", f.Path)
		}
	}
	return errs
}

// checkSlowHook adds what only slow_operation needs: a hold it can be measured by.
func checkSlowHook(h *TestHook) []fieldError {
	errs := checkHookForm("slow_operation", h.Form(), h.Value, true)
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

// FailStatus is the 5xx fail_operation asks the target to fail with, when its value is
// one (a hook whose value is not a status, e.g. ?fail=true, declares none).
func (p *Profile) FailStatus() (int, bool) {
	if p.FailHook == nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(p.FailHook.Value))
	return n, err == nil && n >= 500 && n <= 599
}
