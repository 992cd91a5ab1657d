package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idemproof/idemproof/profile"
)

// freshKeysBudget bounds how long a FreshKeys step sends: a slow target gets fewer newer
// keys (which its scenario reports), never a scenario that runs past its time limit.
const freshKeysBudget = 10 * time.Second

// freshKeysWindow is how long a FreshKeys step may send: freshKeysBudget, or half the
// declared retention when that is shorter, so the repeat that follows still falls well
// inside the first key's window.
func freshKeysWindow(p *profile.Profile) time.Duration {
	if r := p.Retention.Std(); r > 0 {
		return min(freshKeysBudget, r/2)
	}
	return freshKeysBudget
}

// sideEntitySuffix names the entity a FreshKeys step's requests act on: the scenario's
// entity with this suffix. Their side effects land in that entity's ledger, not in the
// scenario's, so a ledger that caps its count (a paginated list) or a per-entity limit of
// the target never mixes them with the effects the scenario judges.
const sideEntitySuffix = "-newer"

// otherEntitySuffix names the entity a Step.OtherEntity step acts on.
const otherEntitySuffix = "-other"

// sendFreshKeys sends a FreshKeys step: FreshKeys requests through the proxy, each with a
// fresh key of its own (the step's key set, key i for request i) and the side entity, at
// most MaxKeepAliveConns (more for a slow target: plan.go; and the run's burst limit) at once, over the run's transport (MCP
// too), for at most freshKeysWindow: what was not sent by then is not sent. The attempts
// are in the history under the step's name, each with its own key.
func (e *execution) sendFreshKeys(ctx context.Context, st Step, attempt int) error {
	n := st.FreshKeys
	entity, err := e.sideEntity(ctx, sideEntitySuffix, false)
	if err != nil {
		return fmt.Errorf("step %s: %w", st.Name, err)
	}
	reqs := make([]requestSpec, n)
	for i := range reqs {
		one := st
		one.Key = KeyScenario
		spec, err := e.t.stepRequest(e.t.proxyURL, entity, scenarioKeys{main: e.keys.setKey(st.Name, i)}, one, e.marked[st.Name])
		if err != nil {
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		reqs[i] = spec
	}
	timeout := e.t.attemptTimeout(st.Hook, false)
	stop := time.Now().Add(freshKeysWindow(e.t.p))
	work := make(chan int)
	var wg sync.WaitGroup
	conns := MaxKeepAliveConns
	if e.t.plan != nil && e.t.plan.freshConns > 0 {
		conns = e.t.plan.freshConns // more at a time, for a slow target (plan.go)
	}
	for w := 0; w < min(n, conns, max(e.burst, 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				spec := reqs[i]
				e.mu.Lock()
				e.used[spec.key] = true
				e.mu.Unlock()
				e.rec.invoke(i, attempt, spec.key, st.Name)
				op, err := e.t.sendAttempt(ctx, e.sender, spec.request(e.t.p), timeout)
				done := e.rec.complete(i, attempt, spec.key, st.Name, op)
				e.mu.Lock()
				if err != nil && e.sendErr == nil {
					e.sendErr = fmt.Errorf("step %s: %w", st.Name, err)
				}
				if done.After(e.lastAnswer) {
					e.lastAnswer = done
				}
				e.mu.Unlock()
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil && time.Now().Before(stop); i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return e.stepErr(ctx)
}
