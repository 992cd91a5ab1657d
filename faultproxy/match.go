package faultproxy

import (
	"net/http"
	"path"
	"strings"
)

// attemptInfo is what a rule can match on: the request and its place in its key's history.
type attemptInfo struct {
	method  string
	path    string
	header  http.Header
	key     string
	hasKey  bool
	attempt int
}

// matches reports whether every set field of the match holds (AND).
func (ar *activeRule) matches(a *attemptInfo) bool {
	m := &ar.rule.Match
	if m.Method != "" && !strings.EqualFold(m.Method, a.method) {
		return false
	}
	if m.Path != "" {
		if ok, _ := path.Match(m.Path, a.path); !ok {
			return false
		}
	}
	for name, want := range ar.headers {
		vv, present := a.header[name]
		if !present || (want != "" && (len(vv) == 0 || vv[0] != want)) {
			return false
		}
	}
	if m.NoKey && a.hasKey {
		return false
	}
	if m.Key != "" {
		if !a.hasKey {
			return false
		}
		if ok, _ := path.Match(m.Key, a.key); !ok {
			return false
		}
	}
	if r := m.Attempts; r != nil {
		if !a.hasKey || a.attempt < r.From || (r.To != 0 && a.attempt > r.To) {
			return false
		}
	}
	return true
}
