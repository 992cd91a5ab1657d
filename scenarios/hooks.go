package scenarios

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/internal/jsonvalue"
	"github.com/idemproof/idemproof/profile"
)

// stepHook is a test hook resolved for one step: what to add to its request.
type stepHook struct {
	header, value string      // a header to set ("" = none)
	extra         [][2]string // more headers to set (a second hook on the request)
	query         url.Values  // query parameters to add
	path          string      // a path replacing the operation's ("" = keep it)
	fields        []hookField // members of the JSON body to set
}

// hookField is one member a field-form hook sets: its path (key_field's syntax) and its
// JSON value.
type hookField struct {
	path  string
	value *jsonvalue.Value
}

// stepHook resolves the step's hook against the profile; false when the step asks for
// none or the profile does not declare it. HookSlowFail is the slow hook with the fail
// hook's header, query, path or field added (CapSlowFail has ruled out the two
// colliding).
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
// and their fields together.
func (h stepHook) with(o stepHook) stepHook {
	out := h
	out.fields = append(slices.Clip(h.fields), o.fields...)
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
	var form profile.HookForm
	data := profile.HookData{Entity: entity}
	value := ""
	switch {
	case (h == HookSlow || h == HookSlowPastLock || h == HookSlowPastTimeout || h == HookSlowPastTimeoutWaited) && p.Slow != nil:
		form, value = p.Slow.Form(), p.Slow.Value
		hold := p.Slow.HoldDuration()
		if h != HookSlow {
			hold = t.pastLockHold()
			if h == HookSlowPastTimeout || h == HookSlowPastTimeoutWaited {
				hold = t.giveUpHold()
			}
			if !strings.Contains(value, "{{") {
				// A plain header value is the hold as a duration: send the longer one.
				value = hold.String()
			}
		}
		data.HoldMs = hold.Milliseconds()
	case h == HookFail && p.FailHook != nil:
		form, value = p.FailHook.Form(), p.FailHook.Value
	case h == HookCrashAfterKey && p.Crash != nil:
		form, value = p.Crash.Form(), p.Crash.AfterKey
	case h == HookCrashAfterCommit && p.Crash != nil:
		form, value = p.Crash.Form(), p.Crash.AfterCommit
	default:
		return stepHook{}, false, nil
	}
	data.Value = value
	var out stepHook
	var err error
	if form.Header != "" {
		out.header = form.Header
		if out.value, err = profile.RenderHook(value, data); err != nil {
			return out, false, fmt.Errorf("render hook value: %w", err)
		}
	}
	if form.Field != "" {
		v, err := profile.RenderHook(value, data)
		if err != nil {
			return out, false, fmt.Errorf("render hook value: %w", err)
		}
		jv, err := form.FieldValue(v)
		if err != nil {
			return out, false, fmt.Errorf("render hook value: %w", err)
		}
		out.fields = []hookField{{form.Field, jv}}
	}
	if len(form.Query) > 0 {
		out.query = url.Values{}
		for _, k := range slices.Sorted(maps.Keys(form.Query)) {
			v, err := profile.RenderHook(form.Query[k], data)
			if err != nil {
				return out, false, fmt.Errorf("render hook query %s: %w", k, err)
			}
			out.query.Set(k, v)
		}
	}
	if form.Path != "" {
		if out.path, err = profile.RenderHook(form.Path, data); err != nil {
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
