package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// Runner defaults.
const (
	DefaultConcurrency      = 4
	DefaultScenarioTimeout  = 20 * time.Second
	DefaultBurstConcurrency = 128
)

// RunConfig says what to run against which targets.
type RunConfig struct {
	Profiles []*profile.Profile
	// Only selects scenarios by ID or path.Match glob ("replay/*"); empty means all.
	Only []string
	// Labels keeps scenarios carrying every one of these labels.
	Labels []string
	// Seed seeds the proxy's fault choices (probabilities); 0 picks one, reported in the
	// Report. Keys and entities are NOT derived from it: every run mints fresh ones.
	Seed int64
	// Strict turns NON-STRICT into FAIL.
	Strict bool
	// Concurrency bounds the scenarios running at once per target (default 4).
	Concurrency int
	// ScenarioTimeout bounds one scenario run (default 20s); a run that times out is
	// UNKNOWN.
	ScenarioTimeout time.Duration
	// BurstConcurrency bounds the attempts of one burst in flight at once (default 128).
	BurstConcurrency int
	// Progress, when set, is called as each scenario finishes (one call at a time).
	Progress func(verdict.Result)
	// Notice, when set, is told how the run deviates from the configuration, once per
	// target (e.g. a target with a global ledger runs its scenarios one at a time).
	Notice func(string)
	// Tool names the tool in the report (default "idemproof").
	Tool string
	// NoPreflight skips the Preflight of each target and the proof of its test hooks
	// (ProveHooks): for a caller that ran them itself (and passes the proofs in
	// HookProofs), and for tests of how the runner judges a target that breaks during a
	// run (a misdescribed target is otherwise an error before any scenario starts).
	NoPreflight bool
	// UnprovenHooks says what a declared test hook that did not act in the proof does:
	// stop the run (UnprovenHooksStop, the default: Run returns the *PreflightError) or
	// make the scenarios that use it N/A (UnprovenHooksNA).
	UnprovenHooks UnprovenHooks
	// HookProofs are the proofs of a caller that ran ProveHooks itself, by target name;
	// with NoPreflight, a target without one runs on its declarations as written.
	HookProofs map[string]*HookProof
	// Preflights are the PreflightTarget results of Profiles, in their order, from a
	// caller that ran the preflight itself (NoPreflight): the pace each target answered
	// at fits the scenarios' limits and sizes to it (plan.go). Missing entries are
	// targets whose pace is unknown: their scenarios run as written. Without
	// NoPreflight, Run fills them from its own preflight.
	Preflights []PreflightResult
}

func (c RunConfig) withDefaults() RunConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.ScenarioTimeout <= 0 {
		c.ScenarioTimeout = DefaultScenarioTimeout
	}
	if c.BurstConcurrency <= 0 {
		c.BurstConcurrency = DefaultBurstConcurrency
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	if c.Tool == "" {
		c.Tool = "idemproof"
	}
	return c
}

// Run runs the selected scenarios against every profile and returns the report: one
// Result per scenario and target, ordered by target then scenario ID. Every target is
// first checked with Preflight, all of them before any scenario runs. An error means the
// run could not start (bad selection, invalid profile, a target that is not what its
// profile says, proxy failure); findings are in the results, never in the error.
//
// Cancelling ctx stops the run promptly: running scenarios end (UNKNOWN, "interrupted"),
// the others never start, and the report, returned without an error, has Complete false
// and lists them in NotRun.
func Run(ctx context.Context, cfg RunConfig) (*verdict.Report, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Profiles) == 0 {
		return nil, errors.New("run: no profile given")
	}
	for _, p := range cfg.Profiles {
		if p == nil {
			return nil, errors.New("run: nil profile")
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("run: profile %s: %w", p.Name, err)
		}
	}
	list, err := Select(cfg.Only, cfg.Labels)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	proofs := cfg.HookProofs
	closeStores, err := StartStorePoints(cfg.Profiles)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer closeStores()
	if !cfg.NoPreflight {
		cfg.Preflights = make([]PreflightResult, len(cfg.Profiles))
		for i, p := range cfg.Profiles {
			res, err := PreflightTarget(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("run: %w", err)
			}
			cfg.Preflights[i] = res
		}
		proofs = map[string]*HookProof{}
		for _, p := range cfg.Profiles {
			proof, err := ProveHooks(ctx, p, list, cfg.UnprovenHooks)
			if err != nil {
				return nil, fmt.Errorf("run: %w", err)
			}
			proofs[p.Name] = proof
		}
	}
	started := time.Now()
	rep := &verdict.Report{SchemaVersion: verdict.ReportSchemaVersion, Tool: cfg.Tool, Seed: cfg.Seed, Strict: cfg.Strict, Started: started.UTC()}
	interrupted := false
	var progress sync.Mutex
	for ti, p := range cfg.Profiles {
		rep.Targets = append(rep.Targets, p.Name)
		if p.Source != "" && p.Source != p.Name {
			if rep.TargetSources == nil {
				rep.TargetSources = map[string]string{}
			}
			rep.TargetSources[p.Name] = p.Source
		}
		if ctx.Err() != nil {
			// Stopped before this target began: nothing of it runs, not even its proxy.
			rep.NotRun = append(rep.NotRun, notRunAll(list, p.Name)...)
			continue
		}
		t, err := openTarget(ctx, p, cfg.Seed)
		if err != nil {
			if ctx.Err() != nil {
				rep.NotRun = append(rep.NotRun, notRunAll(list, p.Name)...)
				continue
			}
			return nil, fmt.Errorf("run: %w", err)
		}
		t.hooks = proofs[p.Name]
		if ti < len(cfg.Preflights) {
			t.pace = cfg.Preflights[ti].Pace
		}
		tcfg := cfg
		tcfg.Concurrency = concurrencyFor(p, cfg)
		results, notRun, cut := runTarget(ctx, t, list, tcfg, fmt.Sprintf("%s-%d", nonce, ti), &progress)
		_ = t.close()
		rep.Results = append(rep.Results, results...)
		rep.NotRun = append(rep.NotRun, notRun...)
		interrupted = interrupted || cut
	}
	rep.Complete = !interrupted && len(rep.NotRun) == 0
	if !rep.Complete {
		rep.Interrupted = interruption(ctx)
	}
	rep.DurationMS = millis(time.Since(started))
	return rep, nil
}

func notRunAll(list []Scenario, target string) []verdict.NotRun {
	out := make([]verdict.NotRun, len(list))
	for i, sc := range list {
		out[i] = verdict.NotRun{ScenarioID: sc.ID, Target: target}
	}
	return out
}

// interruption says why a run stopped: the context's cause ("interrupt signal received",
// "context deadline exceeded").
func interruption(ctx context.Context) string {
	if err := context.Cause(ctx); err != nil {
		return err.Error()
	}
	return "stopped"
}

// runTarget runs the scenarios with bounded concurrency, the slow ones first so that
// their waits overlap with the quick ones. Once ctx is done no scenario starts: those
// are returned as notRun, and cut reports whether a running one was interrupted.
func runTarget(ctx context.Context, t *target, list []Scenario, cfg RunConfig, nonce string, progress *sync.Mutex) (results []verdict.Result, notRun []verdict.NotRun, cut bool) {
	var order, restarting []int
	for i := range list {
		if restartsServer(list[i]) {
			restarting = append(restarting, i)
		} else {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return isSlow(list[order[a]]) && !isSlow(list[order[b]]) })
	all := make([]verdict.Result, len(list))
	ran := make([]bool, len(list))
	var endMu sync.Mutex
	var lastEnd time.Time
	var interrupted atomic.Bool
	work := make(chan int)
	var wg sync.WaitGroup
	do := func(i int) {
		if ctx.Err() != nil {
			return
		}
		var cutShort bool
		all[i], cutShort = runOne(ctx, t, list[i], cfg, nonce, i)
		ran[i] = true
		endMu.Lock()
		lastEnd = time.Now()
		endMu.Unlock()
		if cutShort {
			interrupted.Store(true)
		}
		if cfg.Progress != nil {
			live := all[i]
			live.Provisional = awaitsLateLedger(t.p, live)
			progress.Lock()
			cfg.Progress(live)
			progress.Unlock()
		}
	}
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				do(i)
			}
		}()
	}
feed:
	for _, i := range order {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if !interrupted.Load() && ctx.Err() == nil {
		judgeLate(ctx, t, list, all, ran, lastEnd, cfg.Notice)
	}
	// A scenario that restarts the server runs once every other one is done, the late
	// ledger reads included: the kill would take their attempts down with it, and a
	// server that forgets across a restart would forget their effects too.
	for _, i := range restarting {
		do(i)
	}
	for i, sc := range list {
		if ran[i] {
			results = append(results, all[i])
		} else {
			notRun = append(notRun, verdict.NotRun{ScenarioID: sc.ID, Target: t.p.Name})
		}
	}
	return results, notRun, interrupted.Load()
}

func isSlow(s Scenario) bool { return hasLabels(s, []string{"speed:slow"}) }

// floodCopies is the number of copies at once from which a step floods its target: the
// scenario then runs alone on it (race/burst-1000; not the 50 of race/burst-50).
const floodCopies = 100

// floodsTarget reports whether a step of the scenario sends floodCopies copies or more.
func floodsTarget(s Scenario) bool {
	for _, st := range s.Steps {
		if st.Copies >= floodCopies {
			return true
		}
	}
	return false
}

// restartsServer reports whether a scenario restarts the server the other scenarios'
// attempts go to: it runs last, alone.
func restartsServer(s Scenario) bool { return slices.Contains(s.Needs, profile.CapServerRestart) }

// runOne runs one scenario against one target and judges it. A scenario still running
// when ctx is done is UNKNOWN, interrupted: whatever its history holds was cut short, so
// its checker is not asked.
func runOne(ctx context.Context, t *target, sc Scenario, cfg RunConfig, nonce string, n int) (res verdict.Result, interrupted bool) {
	res = verdict.Result{
		ScenarioID: sc.ID, Description: sc.Description, Requirement: sc.Requirement, Source: sc.Source,
		Level: sc.Level, Labels: sc.Labels, Target: t.p.Name,
	}
	started := time.Now()
	defer func() {
		res.Duration = time.Since(started)
		res.DurationMS = millis(res.Duration)
	}()
	if m := t.p.MissingAll(sc.Needs); m != "" {
		res.Verdict, res.Message, res.Undeclared = verdict.NA, "needs "+m, t.p.Undeclared(sc.Needs)
		return res, false
	}
	if m := t.inexpressibleFault(sc); m != "" {
		res.Verdict, res.Message = verdict.NA, m
		return res, false
	}
	if v, msg, premise := t.hookPremise(sc); premise {
		res.Verdict, res.Message = v, msg
		return res, false
	}
	// Fitted to the target's declared windows and pace (plan.go): on a copy of the
	// target, which the scenario's steps, hooks and waits read.
	pl := planFor(sc, t.p, t.pace, cfg)
	if pl.na != "" {
		res.Verdict, res.Message = verdict.NA, "needs "+pl.na
		return res, false
	}
	// A store fault hits every request the target serves, and a flood of copies queues
	// every other scenario's attempts behind its own (a repeat held for a database
	// connection until the original committed looks like one made to wait for it, a
	// settle behind a thousand given-up copies like a stuck key): such a scenario runs
	// alone.
	if switchesStore(sc) || floodsTarget(sc) {
		t.alone.Lock()
		defer t.alone.Unlock()
	} else {
		t.alone.RLock()
		defer t.alone.RUnlock()
	}
	planned := *t
	planned.plan = &pl
	t = &planned
	// The timeout bounds the work; the waits the profile declares come on top, so a
	// target with a 20 s retention is not cut off by a 20 s timeout, and so does the time
	// its requests take at the target's pace.
	sctx, cancel := context.WithTimeout(ctx, cfg.ScenarioTimeout+t.declaredWaits(sc)+t.storeWaits(sc)+pl.extraLimit)
	defer cancel()
	keys := mintKeys(nonce, n, t.p.MaxKeyLen(), t.p.UUIDKeys())
	entity, err := t.createEntity(sctx, fmt.Sprintf("ip-%s-%03d", nonce, n))
	if err != nil {
		if ctx.Err() != nil {
			res.Verdict, res.Message = verdict.Unknown, "interrupted before it finished ("+interruption(ctx)+"): nothing was judged"
			return res, true
		}
		res.Verdict, res.Message = verdict.Unknown, "could not run: "+err.Error()
		return res, false
	}
	rec, err := t.execute(sctx, sc, keys, entity, cfg.Seed, cfg.BurstConcurrency)
	if ctx.Err() != nil {
		res.Verdict, res.Message = verdict.Unknown, "interrupted before it finished ("+interruption(ctx)+"): nothing was judged"
		res.Evidence.Record = rec
		return res, true
	}
	if err != nil {
		res.Verdict, res.Message = verdict.Unknown, "could not run: "+err.Error()
		return res, false
	}
	rec.Plan = pl.record()
	res.Verdict, res.Message, res.Evidence = judge(sc, *rec, t.p)
	res.Verdict, res.Message = withPremise(sc, *rec, t.p, res.Verdict, res.Message, res.Evidence)
	res.Message += planSuffix(rec.Plan)
	res.Evidence.Record = rec
	if cfg.Strict && res.Verdict == verdict.NonStrict {
		res.Verdict, res.Message = verdict.Fail, "strict: "+res.Message
	}
	return res, false
}

// newNonce is fresh for every run, so keys and entities never repeat across runs, even
// with the same seed and inside the target's retention window.
func newNonce() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("mint run nonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// judge calls the checker; a checker that panics is a bug of ours, reported as UNKNOWN for
// that scenario instead of ending the whole run.
func judge(sc Scenario, rec verdict.Record, p *profile.Profile) (v verdict.Verdict, msg string, ev verdict.Evidence) {
	defer func() {
		if r := recover(); r != nil {
			v, msg, ev = verdict.Unknown, fmt.Sprintf("checker panicked: %v", r), verdict.Evidence{}
		}
	}()
	return sc.Check(rec, p)
}
