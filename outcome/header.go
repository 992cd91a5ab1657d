package outcome

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// HeaderPredicate tests a header of the answer, for an API whose answers differ only
// there (one status for two refusals, told apart by an Idempotency-Outcome header and
// empty bodies). Name is matched in any letter case. Exactly one test is set: Equals (a
// value of the header, exactly), Exists (the header is sent, even empty; or not), or
// Matches (a regexp on a value). A header sent on several lines has several values; the
// predicate holds when one of them passes, each without the spaces around it.
type HeaderPredicate struct {
	Name    string
	Equals  *string
	Exists  *bool
	Matches *regexp.Regexp
}

// Holds reports whether the predicate holds on the answer's headers.
func (p HeaderPredicate) Holds(h http.Header) bool {
	values := h.Values(p.Name)
	if p.Exists != nil {
		return (len(values) > 0) == *p.Exists
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case p.Equals != nil && v == *p.Equals:
			return true
		case p.Matches != nil && p.Matches.MatchString(v):
			return true
		}
	}
	return false
}

// String describes the predicate as a profile would write it.
func (p HeaderPredicate) String() string {
	name := "header " + http.CanonicalHeaderKey(p.Name)
	switch {
	case p.Exists != nil && *p.Exists:
		return name + " exists"
	case p.Exists != nil:
		return name + " absent"
	case p.Matches != nil:
		return name + " ~ /" + p.Matches.String() + "/"
	case p.Equals != nil:
		return name + " == " + strconv.Quote(*p.Equals)
	}
	return name
}

// HeaderSpec is one header predicate as written: Name and exactly one of Equals, Exists
// or Matches.
type HeaderSpec struct {
	Name    string
	Equals  *string
	Exists  *bool
	Matches *string
}

func compileHeader(field string, s HeaderSpec) (HeaderPredicate, []error) {
	var errs []error
	bad := func(sub, msg string) { errs = append(errs, &SpecError{Field: field + sub, Msg: msg}) }
	p := HeaderPredicate{Name: s.Name, Equals: s.Equals, Exists: s.Exists}
	switch {
	case s.Name == "":
		bad(".name", "required: the header's name, e.g. Idempotency-Outcome")
	case strings.ContainsAny(s.Name, " :\t\r\n"):
		bad(".name", "must be a header name such as Idempotency-Outcome, got "+strconv.Quote(s.Name))
	}
	n := 0
	for _, set := range []bool{s.Equals != nil, s.Exists != nil, s.Matches != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		bad("", "set exactly one of equals, exists, matches (got "+strconv.Itoa(n)+")")
	}
	if s.Matches != nil {
		re, err := regexp.Compile(*s.Matches)
		if err != nil {
			bad(".matches", "not a regular expression (Go RE2 syntax): "+err.Error())
		} else {
			p.Matches = re
		}
	}
	return p, errs
}
