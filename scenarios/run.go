package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Runner defaults.
const (
	DefaultConcurrency      = 4
	DefaultScenarioTimeout  = 20 * time.Second
	DefaultBurstConcurrency = 128
)

// RunConfig says what to run against which targets.
type RunConfig struct {
	Profiles []*Profile
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
	Progress func(Result)
	// Notice, when set, is told how the run deviates from the configuration, once per
	// target (e.g. a target with a global ledger runs its scenarios one at a time).
	Notice func(string)
	// Tool names the tool in the report (default "idemproof").
	Tool string
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
// Result per scenario and target, ordered by target then scenario ID. An error means the
// run could not start (bad selection, invalid profile, proxy failure); findings are in
// the results, never in the error.
func Run(ctx context.Context, cfg RunConfig) (*Report, error) {
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
	started := time.Now()
	rep := &Report{SchemaVersion: ReportSchemaVersion, Tool: cfg.Tool, Seed: cfg.Seed, Strict: cfg.Strict, Started: started.UTC()}
	var progress sync.Mutex
	for ti, p := range cfg.Profiles {
		rep.Targets = append(rep.Targets, p.Name)
		if p.Source != "" && p.Source != p.Name {
			if rep.TargetSources == nil {
				rep.TargetSources = map[string]string{}
			}
			rep.TargetSources[p.Name] = p.Source
		}
		t, err := openTarget(ctx, p, cfg.Seed)
		if err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		tcfg := cfg
		tcfg.Concurrency = concurrencyFor(p, cfg)
		results := runTarget(ctx, t, list, tcfg, fmt.Sprintf("%s-%d", nonce, ti), &progress)
		_ = t.close()
		rep.Results = append(rep.Results, results...)
	}
	rep.DurationMS = millis(time.Since(started))
	return rep, nil
}

// runTarget runs the scenarios with bounded concurrency, the slow ones first so that
// their waits overlap with the quick ones.
func runTarget(ctx context.Context, t *target, list []Scenario, cfg RunConfig, nonce string, progress *sync.Mutex) []Result {
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return isSlow(list[order[a]]) && !isSlow(list[order[b]]) })
	results := make([]Result, len(list))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = runOne(ctx, t, list[i], cfg, nonce, i)
				if cfg.Progress != nil {
					progress.Lock()
					cfg.Progress(results[i])
					progress.Unlock()
				}
			}
		}()
	}
	for _, i := range order {
		work <- i
	}
	close(work)
	wg.Wait()
	return results
}

func isSlow(s Scenario) bool { return hasLabels(s, []string{"speed:slow"}) }

// runOne runs one scenario against one target and judges it.
func runOne(ctx context.Context, t *target, sc Scenario, cfg RunConfig, nonce string, n int) (res Result) {
	res = Result{
		ScenarioID: sc.ID, Description: sc.Description, Requirement: sc.Requirement, Source: sc.Source,
		Level: sc.Level, Labels: sc.Labels, Target: t.p.Name,
	}
	started := time.Now()
	defer func() {
		res.Duration = time.Since(started)
		res.DurationMS = millis(res.Duration)
	}()
	if m := t.p.missingAll(sc.Needs); m != "" {
		res.Verdict, res.Message = NA, "needs "+m
		return res
	}
	// The timeout bounds the work; the waits the profile declares come on top, so a
	// target with a 20 s retention is not cut off by a 20 s timeout.
	sctx, cancel := context.WithTimeout(ctx, cfg.ScenarioTimeout+t.declaredWaits(sc))
	defer cancel()
	keys := mintKeys(nonce, n)
	entity := fmt.Sprintf("ip-%s-%03d", nonce, n)
	rec, err := t.execute(sctx, sc, keys, entity, cfg.Seed, cfg.BurstConcurrency)
	if err != nil {
		res.Verdict, res.Message = Unknown, "could not run: "+err.Error()
		return res
	}
	res.Verdict, res.Message, res.Evidence = judge(sc, *rec, t.p)
	res.Evidence.Record = rec
	if cfg.Strict && res.Verdict == NonStrict {
		res.Verdict, res.Message = Fail, "strict: "+res.Message
	}
	return res
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
func judge(sc Scenario, rec Record, p *Profile) (v Verdict, msg string, ev Evidence) {
	defer func() {
		if r := recover(); r != nil {
			v, msg, ev = Unknown, fmt.Sprintf("checker panicked: %v", r), Evidence{}
		}
	}()
	return sc.Check(rec, p)
}
