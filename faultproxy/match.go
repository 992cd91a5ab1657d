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

// matcher is a Match compiled once when the rule is added, so that the many rules every
// request is checked against cost a comparison each, not a glob evaluation.
type matcher struct {
	m       Match
	path    glob
	key     glob
	headers map[string]string // canonical names
}

func compileMatch(m Match) matcher {
	return matcher{m: m, path: newGlob(m.Path, false), key: newGlob(m.Key, true), headers: canonicalHeaders(m.Headers)}
}

// glob is a path.Match pattern with fast paths: a pattern without metacharacters is a
// string comparison, and for keys "*" means any key (even one containing '/').
type glob struct {
	pattern string
	literal bool
	any     bool
}

func newGlob(pattern string, starIsAny bool) glob {
	return glob{
		pattern: pattern,
		literal: !strings.ContainsAny(pattern, `*?[\`),
		any:     pattern == "" || (starIsAny && pattern == "*"),
	}
}

func (g *glob) match(s string) bool {
	switch {
	case g.any:
		return true
	case g.literal:
		return s == g.pattern
	}
	ok, _ := path.Match(g.pattern, s)
	return ok
}

// matches reports whether every set field of the match holds (AND); the cheap checks
// come first.
func (mt *matcher) matches(a *attemptInfo) bool {
	m := &mt.m
	if m.NoKey && a.hasKey {
		return false
	}
	if (m.Key != "" || m.Attempts != nil) && !a.hasKey {
		return false
	}
	if r := m.Attempts; r != nil && (a.attempt < r.From || (r.To != 0 && a.attempt > r.To)) {
		return false
	}
	if m.Method != "" && m.Method != a.method && !strings.EqualFold(m.Method, a.method) {
		return false
	}
	if !mt.path.match(a.path) || !mt.key.match(a.key) {
		return false
	}
	for name, want := range mt.headers {
		vv, present := a.header[name]
		if !present || (want != "" && (len(vv) == 0 || vv[0] != want)) {
			return false
		}
	}
	return true
}
