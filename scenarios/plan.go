package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// A scenario is written for a target whose windows are roomy and whose answers are
// quick. Before it runs, the runner fits it to the target it meets:
//
//   - to the windows the profile declares: a scenario whose holds, waits and client
//     timeout add up past the retention (or whose repeat would meet a lock the
//     lock_timeout has made stale) would prove nothing, since a request after the window
//     may rightly execute anew. It runs with a shorter timing where that still proves
//     its point (recovery/client-gave-up's client timeout, recovery/slow-past-lock's
//     hold), or is N/A before it runs, naming the fields and the numbers;
//   - to the latency the preflight measured (Pace): a scenario of many requests in a
//     row gets the time they take at that pace (three times over, for a slower moment)
//     on top of its limit, and the newer keys of expiry/not-evicted go more at a time,
//     so a slow but correct target is judged, never UNKNOWN for being slow. Counts are
//     kept: fewer keys prove less. Only where the time the counts need would pass
//     maxPlannedLimit are the keep-alive keys fewer, and the message says so.
//
// What was changed is in the Record (verdict.Plan), at the end of the result's message,
// and in the preflight's notes (PlanNotes).

// plan is how one scenario is fitted to one target.
type plan struct {
	na            string         // why the scenario cannot fit (N/A), with the fields and numbers
	giveUpTimeout time.Duration  // HookSlowPastTimeout's attempt timeout (0: client_timeout)
	workTime      time.Duration  // the target's own time for an operation (the pace), which WaitPastHold waits out after the hold too
	pastLockHold  time.Duration  // HookSlowPastLock's hold (0: 2 × lock_timeout)
	insideMargin  time.Duration  // how long before the retention ends WaitInsideWindow's repeat goes (0: the default)
	freshConns    int            // a FreshKeys step's requests at once (0: MaxKeepAliveConns)
	copies        map[string]int // KeySet steps' key counts where fewer than written, by step name
	extraLimit    time.Duration  // added to the scenario's time limit for its requests at the target's pace
	notes         []string
}

// Bounds of the pace scaling.
const (
	// paceSlack is how many times the measured latency a request is given: a target
	// answers slower at some moments than at the preflight's.
	paceSlack = 3
	// maxPlannedLimit bounds a scenario's time limit with its pace share: a target so
	// slow that the keep-alive keys would take longer sends fewer of them.
	maxPlannedLimit = 10 * time.Minute
	// paceFloor is the least time a scenario's requests must need at the target's pace
	// before its limit grows: under it (and under half the limit) the limit covers them,
	// and a limit set short on purpose (--timeout) stays as short.
	paceFloor = DefaultScenarioTimeout / 4
	// minGiveUpTimeout is the shortest client timeout recovery/client-gave-up is given:
	// the held attempt must reach the target, and its work begin, before the client
	// leaves.
	minGiveUpTimeout = 500 * time.Millisecond
)

// record is the plan as the Record keeps it; nil when nothing changed.
func (pl *plan) record() *verdict.Plan {
	if pl == nil || len(pl.notes) == 0 {
		return nil
	}
	return &verdict.Plan{GiveUpAfterMS: millis(pl.giveUpTimeout), Notes: pl.notes}
}

func (pl *plan) note(format string, args ...any) {
	pl.notes = append(pl.notes, fmt.Sprintf(format, args...))
}

// planFor fits sc to the target p at pace, under the run's limits (cfg with defaults).
func planFor(sc Scenario, p *profile.Profile, pace Pace, cfg RunConfig) plan {
	var pl plan
	l := pace.PerRequest()
	if rem := l % time.Millisecond; rem != 0 {
		l += time.Millisecond - rem // whole milliseconds, rounded up: what the notes show
	}
	if hasHook(sc, HookSlowPastTimeout) {
		// The hook's hold comes on top of the target's own time for the work: the retry
		// "after the work would have ended" waits out both.
		pl.workTime = l
	}
	pl.fitGiveUp(sc, p, l)
	pl.fitPastLock(sc, p, l)
	pl.fitSlowToLock(sc, p)
	pl.fitInsideWindow(sc, p, l)
	if pl.na == "" {
		pl.fitPace(sc, p, l, cfg)
	}
	return pl
}

// windowRoom is how much of the retention a scenario leaves for its last answer (the
// retry's, executed or not) after its timing: a fifth of it (at least 250 ms), and a
// request at the measured latency.
func windowRoom(r, latency time.Duration) time.Duration {
	return max(r/5, 250*time.Millisecond) + latency
}

func hasHook(sc Scenario, h Hook) bool {
	return slices.ContainsFunc(sc.Steps, func(st Step) bool { return st.Hook == h })
}

// fitGiveUp: recovery/client-gave-up holds the work past the client's timeout and
// retries once the hold is over; the retry must be answered inside the retention, or a
// new execution is allowed and nothing is proven. A client_timeout too long for that
// gives way, for this scenario's held attempt only, to the longest one that fits.
func (pl *plan) fitGiveUp(sc Scenario, p *profile.Profile, latency time.Duration) {
	r := p.Retention.Std()
	if !hasHook(sc, HookSlowPastTimeout) || r == 0 {
		return
	}
	c, room := p.ClientTimeout.Std(), windowRoom(r, latency)
	retryAt := func(c time.Duration) time.Duration { return pastHold(giveUpHoldFor(c)) + latency }
	if retryAt(c)+room <= r {
		return
	}
	for fit := c.Truncate(10*time.Millisecond) - 10*time.Millisecond; fit >= minGiveUpTimeout; fit -= 10 * time.Millisecond {
		if retryAt(fit)+room <= r {
			pl.giveUpTimeout = fit
			pl.note("the held original's client timeout is %s, not client_timeout %s: with %s the work is held %s and the retry sent %s after the original, past retention %s (where a new execution is allowed and nothing is proven); with %s the work is held %s and the retry sent at %s, leaving %s of the window for its answer",
				fit, c, c, giveUpHoldFor(c), retryAt(c), r, fit, giveUpHoldFor(fit), roundDuration(retryAt(fit)), roundDuration(r-retryAt(fit)))
			return
		}
	}
	pl.na = fmt.Sprintf("a retention that holds the retry after the client gave up: with client_timeout %s the work is held %s and the retry sent %s after the original, and even with a client timeout of %s (the shortest that leaves the client at the target while it works) the retry is sent at %s and its answer needs %s more, past retention %s; a retry after the retention may execute anew, so nothing would be proven (declare the target's longer retention to run it)",
		c, giveUpHoldFor(c), retryAt(c), minGiveUpTimeout, retryAt(minGiveUpTimeout), roundDuration(room), r)
}

// fitPastLock: recovery/slow-past-lock holds the original for twice the lock timeout
// while a takeover comes past it; the original's commit must still fall inside the
// retention, or a second effect is allowed and a target that does not fence passes. A
// hold too long for that gives way to the longest that fits, as long as the original
// still works when the takeover comes.
func (pl *plan) fitPastLock(sc Scenario, p *profile.Profile, latency time.Duration) {
	r, lock := p.Retention.Std(), p.LockTimeout.Std()
	if !hasHook(sc, HookSlowPastLock) || r == 0 || lock == 0 {
		return
	}
	hold, room := 2*lock, windowRoom(r, latency)
	if hold+room <= r {
		return
	}
	least := profile.PastLock(lock) + max(lock/4, 200*time.Millisecond) + latency
	fit := (r - room).Truncate(10 * time.Millisecond)
	if fit >= least {
		pl.pastLockHold = fit
		pl.note("the original is held %s, not 2 × lock_timeout %s = %s: it ends, and its commit lands, inside retention %s (a commit after it may be a new execution, and a target that does not fence would pass); the takeover still comes %s into the hold",
			fit, lock, hold, r, profile.PastLock(lock))
		return
	}
	pl.na = fmt.Sprintf("a retention long enough for the original held past lock_timeout %s to end inside it: the takeover comes %s into the hold, which must last at least %s, and retention %s leaves %s after the room its last answers need (%s); a commit after the retention may be a new execution, so nothing would be proven",
		lock, profile.PastLock(lock), least, r, max(r-room, 0), room)
}

// fitSlowToLock: the in-flight scenarios send their repeat a quarter into the slow
// hook's hold; a declared lock_timeout that runs out before then lets a correct target
// take the key over (its lease is over), which would be judged a double execution.
func (pl *plan) fitSlowToLock(sc Scenario, p *profile.Profile) {
	lock, slow := p.LockTimeout.Std(), (&target{p: p}).slow()
	if lock == 0 || slow == 0 || pl.na != "" {
		return
	}
	// The repeat counts only where it is the same key's: another principal's request is
	// its own key whatever the lock does.
	sameKey := func(fo FaultOn) bool {
		i := slices.IndexFunc(sc.Steps, func(st Step) bool { return st.Name == fo.Step })
		return fo.DurationOf == QuarterSlow && (i < 0 || sc.Steps[i].Principal == 0)
	}
	if !slices.ContainsFunc(sc.Faults, sameKey) {
		return
	}
	at := max(slow/4, 20*time.Millisecond)
	if room := max(lock/4, 50*time.Millisecond); at+room > lock {
		pl.na = fmt.Sprintf("a repeat that meets a live lock: it is sent %s into slow_operation's %s hold (a quarter of it), and lock_timeout %s lets a correct target take the key over %s into it, so the repeat must come at least %s before that (a target whose lease ran out may rightly execute it); declare a slow_operation hold under %s",
			at, slow, lock, lock, room, 4*(lock-room))
	}
}

// fitInsideWindow: expiry/inside-window repeats late in the retention; the repeat must
// be answered before the retention ends, or it may rightly execute anew. The margin
// before the end covers two requests at the measured latency; where that is more than
// the default margin, the repeat goes earlier and the message says how late it was.
func (pl *plan) fitInsideWindow(sc Scenario, p *profile.Profile, latency time.Duration) {
	r := p.Retention.Std()
	if r == 0 || !slices.ContainsFunc(sc.Steps, func(st Step) bool { return st.Wait == WaitInsideWindow }) {
		return
	}
	def := insideWindowMargin(r)
	m := min(max(def, 2*latency), r/2)
	if m == def {
		return
	}
	pl.insideMargin = m
	pl.note("the repeat is sent %s before retention %s ends, not %s: the target answered the preflight in %s, and a repeat answered after the retention may rightly execute anew; the key is shown to live %s, not more",
		m, r, def, latency, r-m)
}

// insideWindowMargin is how long before the retention ends expiry/inside-window's repeat
// goes, for a target that answers at once.
func insideWindowMargin(r time.Duration) time.Duration { return max(r/4, 150*time.Millisecond) }

// fitPace gives a scenario of many requests in a row the time they take at the target's
// pace, and sends a FreshKeys step's keys more at a time.
func (pl *plan) fitPace(sc Scenario, p *profile.Profile, latency time.Duration, cfg RunConfig) {
	if latency <= 0 {
		return
	}
	pl.fitFreshKeys(sc, p, latency, cfg)
	requests, reads := inARow(sc, cfg, pl.freshConns)
	need := paceSlack * latency * time.Duration(requests+reads)
	if need <= max(cfg.ScenarioTimeout/2, paceFloor) {
		return
	}
	if cfg.ScenarioTimeout+need > maxPlannedLimit {
		pl.fewerKeys(sc, latency, cfg)
		requests, reads = pl.inARowPlanned(sc, cfg)
		need = paceSlack * latency * time.Duration(requests+reads)
	}
	pl.extraLimit = need
	pl.note("time limit %s, not %s: %d requests in a row and %d ledger reads at the %s per request the preflight measured, %d× over for a slower moment",
		shownLimit(cfg.ScenarioTimeout+need), cfg.ScenarioTimeout, requests, reads, latency, paceSlack)
}

// fitFreshKeys sends a FreshKeys step's newer keys more at a time when, four at a time,
// the target's pace would send fewer than all of them within half the step's window.
func (pl *plan) fitFreshKeys(sc Scenario, p *profile.Profile, latency time.Duration, cfg RunConfig) {
	for _, st := range sc.Steps {
		if st.FreshKeys == 0 {
			continue
		}
		window, conns := freshKeysWindow(p), min(MaxKeepAliveConns, max(cfg.BurstConcurrency, 1))
		n := time.Duration(st.FreshKeys)
		if n*latency/time.Duration(conns) <= window/2 {
			continue
		}
		// At most as many at once as a burst sends (RunConfig.BurstConcurrency).
		want := int((n*latency + window/2 - 1) / (window / 2))
		pl.freshConns = min(max(want, conns), max(cfg.BurstConcurrency, 1))
		sent := int(time.Duration(pl.freshConns) * window / latency)
		short := ""
		if sent < st.FreshKeys {
			short = fmt.Sprintf("; even so about %d of them will be sent", sent)
		}
		pl.note("the %d newer keys go %d at a time, not %d: at the %s per request the preflight measured, %d at a time send about %d of them in the %s the step may take%s",
			st.FreshKeys, pl.freshConns, conns, latency, conns, int(time.Duration(conns)*window/latency), window, short)
	}
}

// inARow counts the requests the scenario sends one after another (a burst's copies in
// rounds of the burst limit, a key set's in rounds of its connections, a FreshKeys
// step's in rounds of its concurrency) and its ledger reads.
func inARow(sc Scenario, cfg RunConfig, freshConns int) (requests, reads int) {
	var pl plan
	pl.freshConns = freshConns
	return pl.inARowPlanned(sc, cfg)
}

func (pl *plan) inARowPlanned(sc Scenario, cfg RunConfig) (requests, reads int) {
	reads = 2 // the baseline and the final count
	for _, st := range sc.Steps {
		switch {
		case st.KeySet != "":
			n := st.Copies
			if c, ok := pl.copies[st.Name]; ok {
				n = c
			}
			rounds := ceilDiv(n, MaxKeepAliveConns)
			if st.Twice {
				rounds *= 2
			}
			requests += rounds
			reads += ceilDiv(n, keysPerSideEntity)
		case st.FreshKeys > 0:
			conns := pl.freshConns
			if conns == 0 {
				conns = MaxKeepAliveConns
			}
			requests += ceilDiv(st.FreshKeys, conns)
		default:
			requests += ceilDiv(max(st.Copies, 1), max(cfg.BurstConcurrency, 1))
		}
	}
	if sc.Settle != nil {
		requests++
	}
	return requests, reads
}

// fewerKeys cuts the key sets of a scenario whose requests would take past
// maxPlannedLimit at the target's pace to the largest count that fits (in whole rounds
// of the connections, at least two requests on each), and says what that leaves
// unproven.
func (pl *plan) fewerKeys(sc Scenario, latency time.Duration, cfg RunConfig) {
	written := 0
	for _, st := range sc.Steps {
		if st.KeySet != "" {
			written = max(written, st.Copies)
		}
	}
	if written == 0 {
		return
	}
	fits := func(k int) bool {
		pl.copies = map[string]int{}
		for _, st := range sc.Steps {
			if st.KeySet != "" {
				pl.copies[st.Name] = min(k, st.Copies)
			}
		}
		requests, reads := pl.inARowPlanned(sc, cfg)
		return cfg.ScenarioTimeout+paceSlack*latency*time.Duration(requests+reads) <= maxPlannedLimit
	}
	k := written
	for k > 2*MaxKeepAliveConns && !fits(k) {
		k -= MaxKeepAliveConns
	}
	fits(k)
	pl.note("%d keys per route, not %d: at the %s per request the preflight measured, %d would take longer than the %s a scenario may take; fewer requests on each connection prove less (a key store that aliases keys only after more requests on one connection is not excluded)",
		k, written, latency, written, maxPlannedLimit)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// shownLimit rounds a time limit for a note: whole seconds from 10 s up.
func shownLimit(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return roundDuration(d)
}

// PlanNotes says how the runner will fit each scenario of list to the target: p's
// declared windows, and pace, the latency its preflight measured (the zero Pace for
// none). One line per scenario that does not run as written, "ID: what"; what `idemproof
// check` prints with the preflight's notes.
func PlanNotes(p *profile.Profile, pace Pace, list []Scenario, cfg RunConfig) []string {
	cfg = cfg.withDefaults()
	var out []string
	for _, sc := range list {
		if p.MissingAll(sc.Needs) != "" {
			continue
		}
		pl := planFor(sc, p, pace, cfg)
		switch {
		case pl.na != "":
			out = append(out, sc.ID+": N/A, needs "+pl.na)
		case len(pl.notes) > 0:
			out = append(out, sc.ID+": "+strings.Join(pl.notes, "; "))
		}
	}
	return out
}

// planSuffix ends a result's message with what its plan changed.
func planSuffix(p *verdict.Plan) string {
	if p == nil {
		return ""
	}
	return " [fitted to the target: " + strings.Join(p.Notes, "; ") + "]"
}

// keysFor is how many keys a KeySet step sends when the plan cut them (ok false: as
// written).
func (pl *plan) keysFor(step string) (int, bool) {
	if pl == nil {
		return 0, false
	}
	k, ok := pl.copies[step]
	return k, ok
}
