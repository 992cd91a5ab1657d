package scenariotest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/scenarios"
)

// SeedEnv is the environment variable RunT reads the proxy's seed from when no
// scenarios.WithSeed option is given; a failing subtest's repeat line sets it.
const SeedEnv = "IDEMPROOF_SEED"

// envSeed is the seed SeedEnv names, or 0 (the runner then picks one from the clock).
func envSeed() (int64, error) {
	v := strings.TrimSpace(os.Getenv(SeedEnv))
	if v == "" {
		return 0, nil
	}
	seed, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want an integer seed", SeedEnv, v)
	}
	return seed, nil
}

// goTestCommand is the command that runs the subtest named name (t.Name()) again with
// the same seed, from the module root:
//
//	IDEMPROOF_SEED=7 go test ./internal/refunds -run '^TestRefunds$/^replay$/^after-503$'
//
// Every element of the name is anchored, so the pattern selects that subtest alone (a
// scenario ID's slash is a level of the name, as `go test -run` reads it).
func goTestCommand(name string, seed int64) string {
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = "^" + regexp.QuoteMeta(e) + "$"
	}
	return fmt.Sprintf("%s=%d go test %s -run '%s'", SeedEnv, seed, packageDir(), strings.Join(elems, "/"))
}

// packageDir is the test's package as `go test` takes it from the module root
// ("./internal/refunds"): go test runs a test binary in its package's folder.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}

// chosenByRunFlags is the IDs of the scenarios whose subtests of the test named parent
// `go test -run` and `-skip` let through, so that RunT runs those and no others. The
// testing package does not tell which subtests its flags select before they start, so
// this reads the flags as it does (testing/match.go: a pattern is split at the slashes
// and bars outside brackets and parentheses, each element an unanchored regular
// expression matched against the same level of the name, a name shorter than the
// pattern matching in part; -skip removes a name it matches in full). Where the reading
// could differ (a pattern that does not compile) every scenario is chosen: RunT runs a
// subtest the flags let through but this did not choose on its own, so a wrong guess
// costs time, never a verdict.
func chosenByRunFlags(parent string, list []scenarios.Scenario) []string {
	run, runOK := compileFilter(flagValue("test.run"))
	skip, skipOK := compileFilter(flagValue("test.skip"))
	var out []string
	for _, sc := range list {
		elems := strings.Split(parent+"/"+rewriteName(sc.ID), "/")
		if runOK && run != nil {
			if ok, _ := run.matches(elems); !ok {
				continue
			}
		}
		if skipOK && skip != nil {
			if ok, partial := skip.matches(elems); ok && !partial {
				continue
			}
		}
		out = append(out, sc.ID)
	}
	return out
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// filter is a -run or -skip pattern: alternatives, each a list of level patterns.
type filter [][]*regexp.Regexp

func (f filter) matches(name []string) (ok, partial bool) {
	for _, alt := range f {
		ok := true
		for i, s := range name {
			if i >= len(alt) {
				break
			}
			if !alt[i].MatchString(s) {
				ok = false
				break
			}
		}
		if ok {
			return true, len(name) < len(alt)
		}
	}
	return false, false
}

// compileFilter reads a pattern as testing's splitRegexp does. An empty pattern is a nil
// filter (everything matches -run, nothing matches -skip); ok is false when an element
// does not compile.
func compileFilter(pattern string) (f filter, ok bool) {
	if pattern == "" {
		return nil, true
	}
	for _, alt := range splitPattern(pattern) {
		var levels []*regexp.Regexp
		for _, e := range alt {
			re, err := regexp.Compile(rewriteName(e))
			if err != nil {
				return nil, false
			}
			levels = append(levels, re)
		}
		f = append(f, levels)
	}
	return f, true
}

// splitPattern splits at the '/' (levels) and '|' (alternatives) that are outside
// brackets and parentheses, a backslash escaping the next byte.
func splitPattern(s string) [][]string {
	var alts [][]string
	var cur []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			if brackets--; brackets < 0 {
				brackets = 0
			}
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				cur = append(cur, s[:i])
				if s[i] == '|' {
					alts = append(alts, cur)
					cur = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(alts, append(cur, s))
}

// rewriteName is how testing spells a subtest name: white space as '_', other
// unprintable characters quoted.
func rewriteName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == 0x85 || r == 0xA0:
			b.WriteByte('_')
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
