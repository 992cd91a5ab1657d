package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/report/baseline"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// MinCauseResults is how many results a cause must explain before the reports lead
// with it: below it, the results speak for themselves.
const MinCauseResults = 3

// Cause is one finding several results of a target share, read from their evidence — the
// target's own answers in the journal, the attempts a checker blamed, the evidence
// categories — never from the wording of their messages. The reports lead with it and its
// count, then the results, ranked by level.
type Cause struct {
	Target string
	// Kind is stable, for machines: "server-error-500", "re-executed",
	// "diverged:created,id", "category:duplicated".
	Kind string
	// Summary says what the results share: "the target answered 500 to every key that is
	// not a UUID (…); UUID keys succeeded".
	Summary string
	// Results are ranked by level (SAFETY, MUST, SHOULD, POLICY), then verdict (FAIL
	// first), then ID.
	Results []verdict.Result
}

// Count is "48 results (23 FAIL, 25 UNKNOWN)".
func (c Cause) Count() string {
	n := map[verdict.Verdict]int{}
	for _, r := range c.Results {
		n[r.Verdict]++
	}
	var parts []string
	for _, v := range []verdict.Verdict{verdict.Fail, verdict.Unknown, verdict.NonStrict} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return fmt.Sprintf("%d results (%s)", len(c.Results), strings.Join(parts, ", "))
}

// Causes finds the causes that explain at least MinCauseResults of a target's results
// that are not good (FAIL, UNKNOWN, NON-STRICT; not the baseline's known failures), in
// this order, each result going to the first that explains it:
//
//  1. the target answered 5xx: a blamed answer (or, for a result with none, any
//     answer) was the target's own 5xx — not a fault the proxy injected, nor the failure
//     a fail or crash hook asked for. Grouped by status; where every key answered so
//     has a shape no successful key has (not a UUID, longer than N), the summary says so;
//  2. re-executed: more side effects than a key allows, and a repeat sent after its
//     key's original had succeeded got a different successful response: a new execution,
//     so the key's response was not kept;
//  3. diverged: replays that differ from the committed response in the same members;
//  4. the same evidence categories (duplicated, lost, leaked, …).
//
// Causes come largest first.
func Causes(rep *verdict.Report) []Cause {
	var out []Cause
	for _, t := range targets(rep) {
		var problems, all []verdict.Result
		for _, r := range rep.Results {
			if r.Target != t {
				continue
			}
			all = append(all, r)
			if problem(r) {
				problems = append(problems, r)
			}
		}
		if len(problems) < MinCauseResults {
			continue
		}
		out = append(out, targetCauses(t, all, problems)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Results) > len(out[j].Results) })
	return out
}

// problem reports whether a result is one a cause may explain.
func problem(r verdict.Result) bool {
	switch r.Verdict {
	case verdict.Fail, verdict.Unknown, verdict.NonStrict:
		return !r.KnownFailure
	}
	return false
}

func targetCauses(target string, all, problems []verdict.Result) []Cause {
	groups := map[string]*Cause{}
	var order []string
	add := func(kind, summary string, r verdict.Result) {
		c, ok := groups[kind]
		if !ok {
			c = &Cause{Target: target, Kind: kind, Summary: summary}
			groups[kind] = c
			order = append(order, kind)
		}
		c.Results = append(c.Results, r)
	}
	shapes := keyShapes(all)
	var diverged []verdict.Result
	for _, r := range problems {
		if status, ok := serverError(r); ok {
			add(fmt.Sprintf("server-error-%d", status), serverErrorSummary(status, shapes[status]), r)
			continue
		}
		if reExecuted(r) {
			add("re-executed", "a repeat sent after its key's original had succeeded got a response the key had never given (another execution, another side effect): the key's first response was not kept", r)
			continue
		}
		if len(divergedPaths(r)) > 0 {
			diverged = append(diverged, r)
			continue
		}
		if cats := badCategories(r); len(cats) > 0 {
			var what []string
			for _, c := range cats {
				what = append(what, c+": "+verdict.CategoryCounts(c))
			}
			add("category:"+strings.Join(cats, ","), strings.Join(what, "; "), r)
		}
	}
	for _, g := range divergedGroups(diverged) {
		for _, r := range g.results {
			add("diverged:"+g.path, g.summary, r)
		}
	}
	var out []Cause
	for _, kind := range order {
		c := groups[kind]
		if len(c.Results) < MinCauseResults {
			continue
		}
		slices.SortStableFunc(c.Results, byLevelThenVerdict)
		out = append(out, *c)
	}
	return out
}

func byLevelThenVerdict(a, b verdict.Result) int {
	if d := levelRank(a.Level) - levelRank(b.Level); d != 0 {
		return d
	}
	if d := baseline.Rank(b.Verdict) - baseline.Rank(a.Verdict); d != 0 {
		return d // FAIL first
	}
	return strings.Compare(a.ScenarioID, b.ScenarioID)
}

// targetAnswer is one answer the target itself gave (not the proxy), with the key it
// answered and whether the scenario asked for a failure there (a fail or crash hook).
type targetAnswer struct {
	// journaled: the proxy's journal holds the answer, its method known to be unsafe;
	// an answer from the client's history alone may be to any method.
	journaled bool
	key       string
	status    int
	hooked    bool
	blamed    bool
	success   bool
}

// targetAnswers is every answer of the record the target gave to an unsafe method (a
// keyed operation's): the journal's upstream statuses (whatever fault the proxy applied
// to them afterwards), and the blamed answers the journal does not hold (a step around
// the proxy).
func targetAnswers(r verdict.Result) []targetAnswer {
	rec := r.Evidence.Record
	if rec == nil {
		return nil
	}
	steps := stepKinds(r.ScenarioID)
	m := newMarks(rec, r.Evidence.Blame)
	var out []targetAnswer
	paired := map[int]bool{}
	for _, j := range rec.Journal {
		if !j.ReachedUpstream || j.UpstreamStatus == 0 || safeMethod(j.Method) {
			continue
		}
		op, ok := m.opOf[j.Seq]
		step := j.Headers[scenarios.StepHeader]
		if ok {
			paired[op.Index] = true
			step = op.Step
		}
		_, blamed := m.byJournal[j.Seq]
		out = append(out, targetAnswer{journaled: true, key: j.Key, status: j.UpstreamStatus, hooked: steps.hooked(step), blamed: blamed,
			success: j.UpstreamStatus >= 200 && j.UpstreamStatus < 300})
	}
	blamed := map[int]bool{}
	for _, b := range r.Evidence.Blame {
		blamed[b.Index] = true
	}
	for _, op := range rec.History {
		// An answer the journal does not hold is the target's own when it came around the
		// proxy (a direct step), when the scenario has the proxy inject nothing, or when
		// its checker blamed it (a pairing the journal could not make).
		if op.Type == verdict.OpInvoke || paired[op.Index] || op.Status == 0 || op.Error != "" || !(steps.direct(op.Step) || steps.faultless || blamed[op.Index]) {
			continue
		}
		out = append(out, targetAnswer{key: op.Key, status: op.Status, hooked: steps.hooked(op.Step), blamed: blamed[op.Index],
			success: op.Class == outcome.Success})
	}
	return out
}

// stepSet is what the catalogue says of a scenario's steps: which ask the target to
// fail or crash (their failures are the scenario's own doing), which go around the proxy,
// whether the proxy injects anything at all.
type stepSet struct {
	hooks, directs map[string]bool
	faultless      bool // the proxy injects no fault in the scenario
}

// stepName is the catalogue step an attempt's step name belongs to: a Twice step's
// second sends are recorded as NAME-again.
func stepName(s string) string { return strings.TrimSuffix(s, "-again") }

func (s stepSet) hooked(step string) bool { return s.hooks[stepName(step)] }
func (s stepSet) direct(step string) bool { return s.directs[stepName(step)] }

func stepKinds(id string) stepSet {
	out := stepSet{hooks: map[string]bool{}, directs: map[string]bool{}}
	sc, ok := scenarios.Lookup(id)
	if !ok {
		return out
	}
	out.faultless = len(sc.Faults) == 0
	for _, st := range sc.Steps {
		switch st.Hook {
		case scenarios.HookFail, scenarios.HookSlowFail, scenarios.HookCrashAfterKey, scenarios.HookCrashAfterCommit:
			out.hooks[st.Name] = true
		}
		if st.Direct {
			out.directs[st.Name] = true
		}
	}
	return out
}

// safeMethod reports whether an answer to the method says nothing of how the target
// handles keys: GET, HEAD and OPTIONS are safe (RFC 9110), never keyed operations.
func safeMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// serverError is the status of the target's own 5xx that explains r: among its blamed
// answers when its checker blamed some, else among all its answers; the first one, not
// asked for by a hook.
func serverError(r verdict.Result) (int, bool) {
	answers := targetAnswers(r)
	blamed := len(r.Evidence.Blame) > 0
	for _, a := range answers {
		if a.status >= 500 && !a.hooked && (a.blamed || !blamed) {
			return a.status, true
		}
	}
	return 0, false
}

// keyShape is what every key the target answered with one 5xx status has in common
// that no key it answered with a success has, "" when nothing separates them.
type keyShape string

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// keyShapes is, per 5xx status the target answered (not asked for by a hook), what
// separates the keys it answered so from the keys it answered with a success, across
// every result of the target: answers the journal holds, so that a key sent with a safe
// method (which the target rightly ignores) is not counted.
func keyShapes(all []verdict.Result) map[int]keyShape {
	failed := map[int][]string{}
	var succeeded []string
	for _, r := range all {
		for _, a := range targetAnswers(r) {
			switch {
			case a.hooked || a.key == "" || !a.journaled:
			case a.status >= 500:
				failed[a.status] = append(failed[a.status], a.key)
			case a.success:
				succeeded = append(succeeded, a.key)
			}
		}
	}
	out := map[int]keyShape{}
	succeeded = distinct(succeeded)
	if len(succeeded) == 0 {
		return out
	}
	for status, keys := range failed {
		keys = distinct(keys)
		switch {
		case !slices.ContainsFunc(keys, uuidPattern.MatchString) && !slices.ContainsFunc(succeeded, notUUID):
			out[status] = keyShape(fmt.Sprintf("to every key that is not a UUID (%d keys), and a success to the UUID keys (%d)", len(keys), len(succeeded)))
		case minLen(keys) > maxLen(succeeded):
			out[status] = keyShape(fmt.Sprintf("to every key longer than %d characters (%d keys), and a success to the shorter ones (%d)", maxLen(succeeded), len(keys), len(succeeded)))
		case maxLen(keys) < minLen(succeeded):
			out[status] = keyShape(fmt.Sprintf("to every key shorter than %d characters (%d keys), and a success to the longer ones (%d)", minLen(succeeded), len(keys), len(succeeded)))
		}
	}
	return out
}

func distinct(keys []string) []string {
	slices.Sort(keys)
	return slices.Compact(keys)
}

func notUUID(k string) bool { return !uuidPattern.MatchString(k) }

func minLen(keys []string) int {
	n := -1
	for _, k := range keys {
		if l := len([]rune(k)); n < 0 || l < n {
			n = l
		}
	}
	return n
}

func maxLen(keys []string) int {
	n := 0
	for _, k := range keys {
		n = max(n, len([]rune(k)))
	}
	return n
}

func serverErrorSummary(status int, shape keyShape) string {
	s := fmt.Sprintf("the target answered %d itself (no fault the proxy injected, no hook asked for it)", status)
	if shape != "" {
		s = fmt.Sprintf("the target answered %d %s", status, shape)
	}
	return s + ": the scenarios could not see the contract at work"
}

// reExecuted reports whether r counted extra side effects and its history shows a
// successful answer to a repeat invoked after an earlier attempt of the same key had
// succeeded (as the client saw it, or as the journal holds the target's answer a fault
// kept from the client), with a body the key had never given: a second execution, not a
// replay.
func reExecuted(r verdict.Result) bool {
	rec := r.Evidence.Record
	if rec == nil || r.Evidence.Categories[verdict.CatDuplicated] == 0 {
		return false
	}
	type attempt struct {
		client, attempt int
		step, key       string
	}
	invoked := map[attempt]time.Time{}
	type success struct {
		invoked, done time.Time
		body          []byte
	}
	byKey := map[string][]success{}
	for _, op := range rec.History {
		a := attempt{op.Client, op.Attempt, op.Step, op.Key}
		if op.Type == verdict.OpInvoke {
			invoked[a] = op.Time
			continue
		}
		if op.Key == "" || op.Type != verdict.OpOK || op.Class != outcome.Success || len(op.Body) == 0 {
			continue
		}
		byKey[op.Key] = append(byKey[op.Key], success{invoked: invoked[a], done: op.Time, body: op.Body})
	}
	// The target's own successful answers that a fault kept from the client (a lost
	// response the proxy buffered) were given too.
	for _, j := range rec.Journal {
		if j.Key == "" || j.UpstreamStatus < 200 || j.UpstreamStatus > 299 || len(j.UpstreamBody) == 0 || j.UpstreamBodyClipped > 0 || j.UpstreamContentEncoding != "" {
			continue
		}
		done := j.Time.Add(time.Duration(j.UpstreamMillis * float64(time.Millisecond)))
		byKey[j.Key] = append(byKey[j.Key], success{invoked: j.Time, done: done, body: j.UpstreamBody})
	}
	for _, list := range byKey {
		slices.SortStableFunc(list, func(a, b success) int { return a.done.Compare(b.done) })
	}
	// A repeat whose answer is none of the responses its key had given before it was
	// sent is a new execution; one that equals any of them is a replay (of one of two
	// executions, say, which the duplicate already counts).
	for _, list := range byKey {
		for i, later := range list {
			var before [][]byte
			for _, first := range list[:i] {
				if later.invoked.After(first.done) {
					before = append(before, first.body)
				}
			}
			if len(before) > 0 && !slices.ContainsFunc(before, func(b []byte) bool { return bytes.Equal(b, later.body) }) {
				return true
			}
		}
	}
	return false
}

// divergedPaths is the members (and "status") in which r's blamed replays differ from the
// committed response, sorted, for a result counted as diverged.
func divergedPaths(r verdict.Result) []string {
	rec := r.Evidence.Record
	if rec == nil || r.Evidence.Categories[verdict.CatDiverged] == 0 {
		return nil
	}
	ops := map[int]verdict.Op{}
	for _, op := range rec.History {
		ops[op.Index] = op
	}
	var paths []string
	for _, b := range r.Evidence.Blame {
		op, ok := ops[b.Index]
		if !ok || b.Committed == nil {
			continue
		}
		if op.Status != b.Committed.Status && !slices.Contains(paths, "status") {
			paths = append(paths, "status")
		}
		for _, c := range bodytext.Diff(b.Committed.Body, op.Body) {
			if !slices.Contains(paths, c.Path) {
				paths = append(paths, c.Path)
			}
		}
	}
	sort.Strings(paths)
	return paths
}

// divergedGroup is the diverged results that differ from their committed response in
// one member.
type divergedGroup struct {
	path, summary string
	results       []verdict.Result
}

// divergedGroups covers the diverged results with the members they differ in, greedily:
// the member most of them differ in first (the shared cause), then the next for the
// rest. The summary names the other members that differ in some of them too.
func divergedGroups(results []verdict.Result) []divergedGroup {
	paths := make([][]string, len(results))
	for i, r := range results {
		paths[i] = divergedPaths(r)
	}
	done := make([]bool, len(results))
	var out []divergedGroup
	for {
		count := map[string]int{}
		for i, ps := range paths {
			if !done[i] {
				for _, p := range ps {
					count[p]++
				}
			}
		}
		if len(count) == 0 {
			return out
		}
		best := ""
		for p, n := range count {
			if best == "" || n > count[best] || (n == count[best] && p < best) {
				best = p
			}
		}
		g := divergedGroup{path: best}
		also := map[string]int{}
		for i, ps := range paths {
			if done[i] || !slices.Contains(ps, best) {
				continue
			}
			done[i] = true
			g.results = append(g.results, results[i])
			for _, p := range ps {
				if p != best {
					also[p]++
				}
			}
		}
		g.summary = fmt.Sprintf("replays differ from the committed response in %s", best)
		if len(also) > 0 {
			var more []string
			for _, p := range sortedKeys(also) {
				more = append(more, fmt.Sprintf("%s in %d", p, also[p]))
			}
			g.summary += " (and " + strings.Join(more, ", ") + ")"
		}
		out = append(out, g)
	}
}

// badCategories is r's evidence categories that count something wrong, sorted.
func badCategories(r verdict.Result) []string {
	var out []string
	for c, n := range r.Evidence.Categories {
		if n > 0 && c != verdict.CatRecovered {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// causesHeading is "1 cause explains 48 of the 52 results that are not good".
func causesHeading(rep *verdict.Report, causes []Cause) string {
	explained, problems := 0, 0
	for _, c := range causes {
		explained += len(c.Results)
	}
	for _, r := range rep.Results {
		if problem(r) {
			problems++
		}
	}
	word := "causes explain"
	if len(causes) == 1 {
		word = "cause explains"
	}
	return fmt.Sprintf("%d %s %d of the %d results that are not good", len(causes), word, explained, problems)
}

// levelGroups splits results ranked by level into one run per level.
func levelGroups(results []verdict.Result) [][]verdict.Result {
	var out [][]verdict.Result
	for i := 0; i < len(results); {
		j := i
		for j < len(results) && results[j].Level == results[i].Level {
			j++
		}
		out = append(out, results[i:j])
		i = j
	}
	return out
}

// levelName is "SAFETY (30)": a run of levelGroups.
func levelName(group []verdict.Result) string {
	level := string(group[0].Level)
	if level == "" {
		level = "other"
	}
	return fmt.Sprintf("%s (%d)", level, len(group))
}

// causeLevels is a cause's results per level, in level order, each result written by
// item: "SAFETY (2)", "FAIL before/503, UNKNOWN expiry/inside-window".
func causeLevels(c Cause, item func(verdict.Result) string) [][2]string {
	var out [][2]string
	for _, g := range levelGroups(c.Results) {
		items := make([]string, len(g))
		for i, r := range g {
			items[i] = item(r)
		}
		out = append(out, [2]string{levelName(g), strings.Join(items, ", ")})
	}
	return out
}

// writeCauses prints the causes after the counts table:
//
//	1 cause explains 48 of the 52 results that are not good:
//
//	48 results (23 FAIL, 25 UNKNOWN) @ reference+strict-key-shape: the target answered 500 to every key that is not a UUID …
//	  SAFETY (30): FAIL before/503, FAIL before/delay, …
func writeCauses(w io.Writer, rep *verdict.Report) {
	causes := Causes(rep)
	if len(causes) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", causesHeading(rep, causes))
	for _, c := range causes {
		fmt.Fprintf(w, "\n%s @ %s: %s\n", c.Count(), c.Target, printable(c.Summary))
		for _, l := range causeLevels(c, func(r verdict.Result) string { return string(r.Verdict) + " " + r.ScenarioID }) {
			fmt.Fprintf(w, "  %s: %s\n", l[0], l[1])
		}
	}
}
