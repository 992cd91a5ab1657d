package stdio

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy"
)

// fault acts on one request: apply drives its exchange (forward, await the answer,
// deliver, drop, kill) and returns when the request is settled. forwardsAtOnce says the
// request goes to the server unchanged at once, so the session forwards it in the order
// it arrived before apply runs.
type fault interface {
	apply(x *exchange)
	forwardsAtOnce() bool
}

// builder turns a rule's fault into a pipe fault; a *faultproxy.FieldError names what
// cannot be applied on a pipe and why.
type builder func(spec faultproxy.FaultSpec) (fault, error)

// faults is the registry: every fault type the layer applies, the proxy's names
// included where they mean something on a pipe.
var faults = map[string]builder{
	faultproxy.FaultBeforeDrop:    func(s faultproxy.FaultSpec) (fault, error) { return beforeDrop{}, onlyParams(s) },
	faultproxy.FaultBeforeReset:   func(s faultproxy.FaultSpec) (fault, error) { return beforeDrop{}, onlyParams(s) },
	faultproxy.FaultBeforeDelay:   newBeforeDelay,
	faultproxy.FaultBeforeStatus:  newBeforeStatus,
	faultproxy.FaultAfterDrop:     func(s faultproxy.FaultSpec) (fault, error) { return afterDrop{}, onlyParams(s) },
	faultproxy.FaultAfterReset:    func(s faultproxy.FaultSpec) (fault, error) { return afterDrop{}, onlyParams(s) },
	faultproxy.FaultAfterClose:    func(s faultproxy.FaultSpec) (fault, error) { return afterDrop{}, onlyParams(s) },
	faultproxy.FaultAfterTruncate: newAfterTruncate,
	faultproxy.FaultAfterHold:     newAfterHold,
	faultproxy.FaultAfterDelay:    newAfterDelay,
	faultproxy.FaultAfterStatus:   newAfterStatus,
	faultproxy.FaultAfterKill:     func(s faultproxy.FaultSpec) (fault, error) { return afterKill{}, onlyParams(s) },
	faultproxy.FaultDuplicate:     newDuplicate,
}

// FaultTypes lists the fault types the layer applies, sorted.
func FaultTypes() []string {
	out := make([]string, 0, len(faults))
	for t := range faults {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// CheckFault reports whether the layer can apply spec: nil when it can, else a
// *faultproxy.FieldError saying what a pipe cannot express (a status without a JSON-RPC
// body to answer with) or which parameter is wrong.
func CheckFault(spec faultproxy.FaultSpec) error {
	_, err := build(spec)
	return err
}

func build(spec faultproxy.FaultSpec) (fault, error) {
	if spec.Type == "" {
		return nil, &faultproxy.FieldError{Field: "fault.type", Msg: "required; one of " + strings.Join(FaultTypes(), ", ")}
	}
	b, ok := faults[spec.Type]
	if !ok {
		return nil, &faultproxy.FieldError{Field: "fault.type", Msg: fmt.Sprintf("unknown on a pipe: %q; one of %s", spec.Type, strings.Join(FaultTypes(), ", "))}
	}
	f, err := b(spec)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// onlyParams refuses every parameter of spec not named in allowed (JSON names): a
// parameter the pipe would silently ignore is a mistake worth saying.
func onlyParams(spec faultproxy.FaultSpec, allowed ...string) error {
	set := map[string]bool{
		"status": spec.Status != 0, "body": spec.Body != "", "content_type": spec.ContentType != "",
		"jsonrpc_id": spec.JSONRPCID, "retry_after": spec.RetryAfter != 0, "bytes": spec.Bytes != 0,
		"duration_ms": spec.Duration != 0, "then": spec.Then != "", "mode": spec.Mode != "",
	}
	for _, a := range allowed {
		delete(set, a)
	}
	var names []string
	for n, isSet := range set {
		if isSet {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	why := ""
	switch names[0] {
	case "status", "content_type", "retry_after":
		why = ": a line on a pipe has no status and no headers"
	}
	use := "no parameters"
	if len(allowed) > 0 {
		use = "only " + strings.Join(allowed, ", ")
	}
	return &faultproxy.FieldError{Field: "fault." + names[0], Msg: fmt.Sprintf("not a parameter of %s on a pipe (it takes %s)%s", spec.Type, use, why)}
}

func durationParam(spec faultproxy.FaultSpec) (time.Duration, error) {
	if spec.Duration <= 0 {
		return 0, &faultproxy.FieldError{Field: "fault.duration_ms", Msg: spec.Type + " needs a positive duration_ms"}
	}
	return spec.Duration, nil
}

// answerBody checks a status fault's body: the JSON-RPC response the layer answers with,
// since a line has no status of its own to fail with.
func answerBody(spec faultproxy.FaultSpec) ([]byte, error) {
	if err := onlyParams(spec, "status", "body", "jsonrpc_id"); err != nil {
		return nil, err
	}
	if spec.Status != 0 && spec.Status != 200 {
		return nil, &faultproxy.FieldError{Field: "fault.status", Msg: fmt.Sprintf("a line on a pipe has no status (%d): the layer can only answer with a JSON-RPC response, its body", spec.Status)}
	}
	b := gjson.Parse(spec.Body)
	if spec.Body == "" || !gjson.Valid(spec.Body) || !b.IsObject() || b.Get("jsonrpc").String() != "2.0" || !(b.Get("result").Exists() || b.Get("error").Exists()) {
		return nil, &faultproxy.FieldError{Field: "fault.body", Msg: `a line on a pipe has no status: give the JSON-RPC response to answer with, e.g. {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unavailable"}} (its id is set to the request's)`}
	}
	return []byte(spec.Body), nil
}
