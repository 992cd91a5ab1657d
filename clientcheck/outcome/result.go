package outcome

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// Result is what happened to one logical operation, as the client can know it.
type Result struct {
	// Outcome is OutcomeOK, OutcomeFailed or OutcomeUnknown.
	Outcome string
	// Status is the last HTTP status seen (0: none).
	Status int
	// Err is why the outcome is unknown (nil otherwise).
	Err error
	// Key is the idempotency key the client used ("" not said).
	Key string
}

// Succeeded is an operation the client saw happen.
func Succeeded() Result { return Result{Outcome: OutcomeOK} }

// Failed is an operation refused for good with a status: it did not happen.
func Failed(status int) Result { return Result{Outcome: OutcomeFailed, Status: status} }

// Unknown is an operation that may have happened: its answers were lost, the attempts
// ran out, the API was in trouble.
func Unknown(err error) Result { return Result{Outcome: OutcomeUnknown, Err: err} }

// WithKey is r with the idempotency key the client used, for the reports.
func (r Result) WithKey(key string) Result { r.Key = key; return r }

// Of is the outcome an SDK call's error says (nil: Succeeded). A 4xx found in the
// error that is no "come back later" is Failed; any other error is Unknown (with the
// status when one was found), never Failed.
func Of(err error) Result {
	if err == nil {
		return Succeeded()
	}
	status, ok := statusIn(err)
	if !ok {
		status, ok = statusInText(err.Error())
	}
	if ok && definite(status) {
		return Failed(status)
	}
	r := Unknown(err)
	if ok {
		r.Status = status
	}
	return r
}

// OfResponse is the outcome of a (response, error) pair, as net/http and
// go-retryablehttp return them: the error first, then the response's status.
func OfResponse(resp *http.Response, err error) Result {
	switch {
	case err != nil:
		return Of(err)
	case resp == nil:
		return Unknown(errors.New("no response and no error"))
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return Succeeded()
	case definite(resp.StatusCode):
		return Failed(resp.StatusCode)
	}
	r := Unknown(fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
	r.Status = resp.StatusCode
	return r
}

// definite reports whether a status is a refusal that says the operation did not
// happen: a 4xx other than the ones that say "not now" (408 timeout, 409 in flight, 425
// too early, 429 throttled), which follow earlier attempts that may have committed.
func definite(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status >= 400 && status < 500
}

// statusFields are the names SDK errors carry their HTTP status under.
var statusFields = []string{"StatusCode", "HTTPStatusCode", "HTTPStatus"}

// statusIn finds an HTTP status in err's chain: a StatusCode() or HTTPStatusCode()
// method, or an int field of one of statusFields in the error's struct.
func statusIn(err error) (int, bool) {
	for _, e := range chain(err) {
		if s, ok := e.(interface{ StatusCode() int }); ok && validStatus(s.StatusCode()) {
			return s.StatusCode(), true
		}
		if s, ok := e.(interface{ HTTPStatusCode() int }); ok && validStatus(s.HTTPStatusCode()) {
			return s.HTTPStatusCode(), true
		}
		v := reflect.ValueOf(e)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			continue
		}
		for _, name := range statusFields {
			if f := v.FieldByName(name); f.IsValid() && f.CanInt() && validStatus(int(f.Int())) {
				return int(f.Int()), true
			}
		}
	}
	return 0, false
}

// chain is err and every error it wraps, depth first (errors.Join included), bounded.
func chain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if e == nil || len(out) >= 64 {
			return
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		}
	}
	walk(err)
	return out
}

func validStatus(s int) bool { return s >= 100 && s <= 599 }

// textStatus finds a status the way error texts say one: "status 503", "status code:
// 422", "HTTP 429", "HTTP status 503".
var textStatus = regexp.MustCompile(`(?i)\b(?:status(?:\s*code)?|http(?:\s*status)?)\s*[:=]?\s*([1-5][0-9]{2})\b`)

// statusInText is the one status err's text names; none or two different ones: not found.
func statusInText(text string) (int, bool) {
	found := 0
	for _, m := range textStatus.FindAllStringSubmatch(text, 8) {
		s, _ := strconv.Atoi(m[1])
		if found != 0 && found != s {
			return 0, false
		}
		found = s
	}
	return found, found != 0
}

// Recorder writes the outcomes of one client's operations to the outcome file.
type Recorder struct{ w *Writer }

// NewRecorder records to path; "" records nothing (the client runs outside
// client-check).
func NewRecorder(path string) *Recorder {
	if path == "" {
		return &Recorder{}
	}
	return &Recorder{w: NewWriter(path)}
}

// FromEnv records to the file client-check names in $IDEMPROOF_OUTCOME_FILE.
func FromEnv() *Recorder { return NewRecorder(os.Getenv(EnvFile)) }

// maxNote bounds the error text kept in a line's note.
const maxNote = 300

// Record appends operation's result.
func (rec *Recorder) Record(operation string, r Result) error {
	if operation == "" {
		return errors.New("record outcome: the operation is empty: name it by its entity (the order_id)")
	}
	if rec == nil || rec.w == nil {
		return nil
	}
	line := Line{Operation: operation, Outcome: r.Outcome, Key: r.Key, Status: r.Status}
	if r.Err != nil {
		line.Note = clip(r.Err.Error(), maxNote)
	}
	return rec.w.Write(line)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
