// Package outcome classifies a target's answer to one attempt into the classes the
// checkers judge. Checkers never read raw statuses: a JSON-RPC error inside a 200 is a
// refusal, a 409 is "in flight" only because the profile says so.
//
//	transport answer (status, headers, body) ──> Classifier ──> Class ──> checkers
//
// What is guaranteed: Classify is a pure function of the answer it is given; an answer
// the client could not see whole (timeout, reset, truncated body) is never classified —
// the transport reports it as Info, Jepsen's "the outcome is unknown".
//
// Statuses is the classifier of a profile without outcome rules: the status rules.
// Rules is the rule-based classifier of a profile's `outcomes:` (a status, predicates on
// the JSON body at gjson paths, a regexp on the body, predicates on headers; all of a
// rule's predicates must hold, any rule of a class may match, classes in the profile's
// order of precedence), with Statuses as its fallback for the classes it does not cover.
package outcome

import "net/http"

// Class is what an answer means for the contract.
type Class string

const (
	Success         Class = "success"          // the operation's result (executed or replayed)
	InFlight        Class = "in_flight"        // refused for now: the original is still running; retry later
	Mismatch        Class = "mismatch"         // the key was reused with another payload
	MissingKey      Class = "missing_key"      // the request needed a key and had none
	InvalidKey      Class = "invalid_key"      // the key's shape was refused (empty, too long, control characters)
	ValidationError Class = "validation_error" // the request was refused before execution
	BusinessError   Class = "business_error"   // the work ran and refused (e.g. a declined refund)
	ClientError     Class = "client_error"     // another refusal the profile does not name (e.g. 401, 404)
	ServerError     Class = "server_error"     // the target failed (5xx, or the rules say so)
	// Throttled is a rate limit's refusal (429 unless the profile declares 429 for
	// something else): the target would not look at the request now, so the answer says
	// nothing about the operation, the key or the contract, and proves nothing either way.
	Throttled Class = "throttled"
	Info      Class = "info" // the client could not see the outcome: timeout, reset, cut body
)

// Classes lists every class, in the order profiles and reports name them.
var Classes = []Class{Success, InFlight, Mismatch, MissingKey, InvalidKey, ValidationError, BusinessError, ClientError, ServerError, Throttled, Info}

// Valid reports whether c is one of Classes.
func (c Class) Valid() bool {
	for _, k := range Classes {
		if c == k {
			return true
		}
	}
	return false
}

// Refusal reports whether the class is an answer that says the operation was not
// performed for this request (every 4xx-like class).
func (c Class) Refusal() bool {
	switch c {
	case InFlight, Mismatch, MissingKey, InvalidKey, ValidationError, ClientError:
		return true
	}
	return false
}

// Determinate reports whether the answer tells the operation's fate: the client saw it
// whole (not Info) and the target looked at the request (not Throttled). Checkers judge
// an indeterminate answer as nothing seen: it neither proves nor violates anything.
func (c Class) Determinate() bool { return c != Info && c != Throttled && c != "" }

// Answer is one complete answer as the transport saw it.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Classifier maps a complete answer to its class.
type Classifier interface {
	Classify(a Answer) Class
}

// ClassifierFunc adapts a function to Classifier.
type ClassifierFunc func(Answer) Class

// Classify calls f.
func (f ClassifierFunc) Classify(a Answer) Class { return f(a) }

// Statuses classifies by status alone, from the statuses a profile declares; zero means
// not declared. Where two declared statuses are equal (400 for a missing key and for a
// validation error), the earlier field below wins, and checkers that sent a request of
// one kind accept any Refusal for it.
type Statuses struct {
	InFlight   int
	Mismatch   int
	MissingKey int
	Business   int
	Validation int
}

// Classify implements Classifier.
func (s Statuses) Classify(a Answer) Class {
	st := a.Status
	switch {
	case st >= 200 && st <= 299:
		return Success
	case st >= 500:
		return ServerError
	case st == 0:
		return Info
	case s.InFlight != 0 && st == s.InFlight:
		return InFlight
	case s.Mismatch != 0 && st == s.Mismatch:
		return Mismatch
	case s.Business != 0 && st == s.Business:
		return BusinessError
	case s.MissingKey != 0 && st == s.MissingKey:
		return MissingKey
	case s.Validation != 0 && st == s.Validation:
		return ValidationError
	case st == http.StatusTooManyRequests:
		return Throttled
	case st >= 400:
		return ClientError
	}
	// 1xx after the final response and 3xx (redirects are not followed): not a result of
	// the operation the checkers can use.
	return ClientError
}
