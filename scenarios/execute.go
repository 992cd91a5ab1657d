package scenarios

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

// execution is one scenario run against one target: its keys, entity and history.
type execution struct {
	t       *target
	sc      Scenario
	keys    scenarioKeys
	entity  string
	burst   int
	rec     recorder
	sender  transport.Sender // the transport's attempts of this run (MCP: its sessions)
	sendErr error            // the first attempt that could not be made at all
	bg      sync.WaitGroup
	marked  map[string]bool // steps whose attempts carry StepHeader
	used    map[string]bool // keys sent, for the journal
	// sideEntities are the entities key sets acted on (sideEntity), whose ledgers count
	// toward the operation's.
	sideEntities []string
	sideByName   map[string]string // sideEntity's suffix -> the entity
	otherEntity  string            // the entity an OtherEntity step acted on
	attempt      int               // attempt counter of the logical client 0
	ledgerBefore map[string]int    // Step.CountBefore's reads, by step
	countErr     error             // the first of them that failed
	store        storeSwitch       // the store faults the steps switched (Step.Store)

	firstAnswer time.Time
	// lastAnswer is the latest completion of any attempt so far: "past the lock
	// timeout" counts from it when it is later than the step's start, since the
	// target took the lock at some moment before it answered, not when the client sent.
	lastAnswer time.Time
	firstStart time.Time
	lastStart  time.Time
	mu         sync.Mutex
}

// execute runs the scenario's steps and gathers the Record its checker judges.
func (t *target) execute(ctx context.Context, sc Scenario, keys scenarioKeys, entity string, seed int64, burst int) (*verdict.Record, error) {
	e := &execution{t: t, sc: sc, keys: keys, entity: entity, burst: burst, marked: map[string]bool{}, used: map[string]bool{}}
	e.store.t = t
	defer func() {
		// Whatever happened, the target's store is back before the next scenario.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second+t.hangFor())
		defer cancel()
		_ = e.store.heal(hctx)
	}()
	// Every attempt of the run goes through one sender (MCP: its sessions), closed when
	// the run is over.
	e.sender = t.tr.Open()
	defer e.sender.Close()
	rules, err := e.installFaults(ctx)
	defer func() {
		// A fresh context: the scenario's may have ended, and a leftover rule would
		// only ever match this run's key, but the proxy should not keep it.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, name := range rules {
			_ = t.ctl.DeleteRule(cctx, name)
		}
	}()
	if err != nil {
		return nil, err
	}
	watchVendor, err := e.installVendorFaults()
	if watchVendor {
		defer t.sink.RemoveRules(entity)
	}
	if err != nil {
		return nil, err
	}
	base, baseErr := t.readBaseline(ctx, e.uses(PayloadOther))
	runErr := e.runSteps(ctx, base[verdict.LedgerOperation])
	e.bg.Wait()
	if runErr == nil {
		runErr = e.store.heal(ctx)
	}
	if runErr == nil {
		runErr = e.settle(ctx)
	}
	if runErr != nil {
		return nil, runErr
	}
	if err := e.stepErr(ctx); err != nil {
		return nil, err // a background step's attempt could not be made
	}
	rec := &verdict.Record{History: e.rec.history(), Ledger: map[string]int{}, Seed: seed, Entity: entity, Store: e.store.events}
	if !t.p.SideEffects.Global() {
		rec.SideEntities = e.sideEntities // a global ledger counts their effects already
	}
	if watchVendor {
		rec.Downstream, rec.DownstreamErr = e.settleVendor(ctx)
	}
	var ledgerErrs []string
	if baseErr != nil {
		ledgerErrs = append(ledgerErrs, baseErr.Error())
	}
	n, err := t.readOperationLedger(ctx, rec)
	if err != nil {
		ledgerErrs = append(ledgerErrs, err.Error())
	} else {
		rec.Ledger[verdict.LedgerOperation] = n - base[verdict.LedgerOperation]
	}
	if e.otherEntity != "" && !t.p.SideEffects.Global() {
		rec.OtherEntity = e.otherEntity
		n, err := t.readLedger(ctx, t.p.SideEffects, e.otherEntity)
		if err != nil {
			ledgerErrs = append(ledgerErrs, "other entity: "+err.Error())
		} else {
			rec.Ledger[verdict.LedgerOtherEntity] = n
		}
	}
	if e.uses(PayloadOther) {
		n, err := t.readLedger(ctx, t.p.Other.SideEffects, entity)
		if err != nil {
			ledgerErrs = append(ledgerErrs, "other_operation: "+err.Error())
		} else {
			rec.Ledger[verdict.LedgerOther] = n - base[verdict.LedgerOther]
		}
	}
	if e.countErr != nil {
		ledgerErrs = append(ledgerErrs, e.countErr.Error())
	}
	rec.LedgerBefore = e.ledgerBefore
	rec.LedgerErr = strings.Join(ledgerErrs, "; ")
	keysUsed, sent := e.journalKeys(rec.History)
	rec.Journal, err = t.journalFor(ctx, keysUsed, sent)
	if err != nil {
		return nil, err
	}
	// What the upstream committed, in the form the attempts' answers have (MCP: the
	// JSON-RPC response without its id), so checkers compare like with like.
	// A body the journal clipped (an external proxy's smaller journal_body_limit) is not
	// the committed body: it is left out, so no checker compares a prefix as if it were
	// the whole (they then say the committed body was not buffered).
	for i := range rec.Journal {
		j := &rec.Journal[i]
		switch {
		case j.UpstreamBodyClipped > 0:
			j.UpstreamBody = nil
		case len(j.UpstreamBody) > 0:
			j.UpstreamBody = t.tr.Comparable(j.UpstreamBody, j.UpstreamContentEncoding)
			if j.UpstreamBody == nil && t.p.Transport == profile.TransportMCP && j.UpstreamStatus >= 200 && j.UpstreamStatus <= 299 {
				// The fault ended an answer that held no response: the server closed the
				// stream to be polled (SEP-1699) while its tool still ran.
				j.Note = strings.TrimPrefix(j.Note+"; "+NoteAnswerWithoutResponse, "; ")
			}
		}
	}
	return rec, nil
}

// countBefore reads the operation's ledger before a step (Step.CountBefore).
func (e *execution) countBefore(ctx context.Context, step string) {
	n, err := e.t.readLedger(ctx, e.t.p.SideEffects, e.entity)
	if err != nil {
		if e.countErr == nil {
			e.countErr = fmt.Errorf("before %s: %w", step, err)
		}
		return
	}
	if e.ledgerBefore == nil {
		e.ledgerBefore = map[string]int{}
	}
	e.ledgerBefore[step] = n
}

// held reports whether a fault holds a response past the client's timeout; only the
// first step's attempt is held, so only it gets the shortened hold timeout.
func (e *execution) held() bool {
	for _, fo := range e.sc.Faults {
		if fo.DurationOf == PastClientTimeout {
			return true
		}
	}
	return false
}

func (e *execution) uses(pl Payload) bool {
	for _, st := range e.sc.Steps {
		if st.Payload == pl {
			return true
		}
	}
	return false
}

// installFaults adds the scenario's rules, each matching only its own key.
func (e *execution) installFaults(ctx context.Context) ([]string, error) {
	var names []string
	for i, fo := range e.sc.Faults {
		spec := fo.Fault
		if fo.DurationOf != "" {
			spec.Duration = e.t.resolve(fo.DurationOf)
		}
		r := faultproxy.Rule{
			Name:  fmt.Sprintf("%s-f%d", e.keys.main, i),
			Match: faultproxy.Match{Key: e.keys.main, Attempts: fo.Attempts},
			Fault: spec,
		}
		if fo.Step != "" {
			r.Match.Headers = map[string]string{StepHeader: fo.Step}
			e.marked[fo.Step] = true
		}
		if err := e.t.ctl.AddRule(ctx, r); err != nil {
			return names, fmt.Errorf("add rule %s: %w", r.Name, err)
		}
		names = append(names, r.Name)
	}
	return names, nil
}

func (e *execution) runSteps(ctx context.Context, base int) error {
	for i, st := range e.sc.Steps {
		if st.ChangeMember > len(e.t.p.ChangeableMembers()) {
			continue // the body has fewer members to change than the scenario has steps
		}
		if err := e.wait(ctx, st.Wait); err != nil {
			return err
		}
		if st.Store != StoreNone {
			if err := e.store.set(ctx, st.Store, st.Name); err != nil {
				return fmt.Errorf("step %s: %w", st.Name, err)
			}
		}
		if i > 0 && !st.Background {
			e.awaitPolledWork(ctx, base)
		}
		if st.CountBefore {
			e.countBefore(ctx, st.Name)
		}
		e.attempt++
		// The step's start, taken before any goroutine runs, is what "past the lock
		// timeout" counts from.
		e.mu.Lock()
		e.lastStart = time.Now()
		if e.firstStart.IsZero() {
			e.firstStart = e.lastStart
		}
		e.mu.Unlock()
		if st.Background {
			// The next step starts only once this one's attempts are on their way, so a
			// repeat never overtakes the original it is meant to meet in flight.
			started := make(chan struct{})
			e.bg.Add(1)
			go func(st Step, attempt int) {
				defer e.bg.Done()
				_ = e.sendCopies(ctx, st, attempt, started)
			}(st, e.attempt)
			select {
			case <-started:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if err := e.sendCopies(ctx, st, e.attempt, nil); err != nil {
			return err
		}
		if st.Store == StoreBack {
			if err := e.retryWhileRecovering(ctx, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendCopies sends a step once, or Copies times at once behind a start barrier, at most
// burst attempts in flight.
// started, when not nil, is closed once every attempt has been invoked (or the step
// failed to build).
func (e *execution) sendCopies(ctx context.Context, st Step, attempt int, started chan<- struct{}) error {
	if st.KeySet != "" {
		return e.sendKeySet(ctx, st, attempt, started)
	}
	if st.FreshKeys > 0 {
		if started != nil {
			close(started) // a FreshKeys step is never a background step's barrier
		}
		return e.sendFreshKeys(ctx, st, attempt)
	}
	n := max(st.Copies, 1)
	var invoked sync.WaitGroup
	invoked.Add(n)
	if started != nil {
		go func() { invoked.Wait(); close(started) }()
	}
	base := e.t.proxyURL
	if st.Direct && e.t.p.BaseURL != "" {
		base = e.t.p.BaseURL
	}
	entity := e.entity
	if st.OtherEntity {
		var err error
		if entity, err = e.sideEntity(ctx, otherEntitySuffix, false); err != nil {
			invoked.Add(-n)
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		e.mu.Lock()
		e.otherEntity = entity
		e.mu.Unlock()
	}
	spec, err := e.t.stepRequest(base, entity, e.keys, st, e.marked[st.Name])
	if err != nil {
		invoked.Add(-n)
		return fmt.Errorf("step %s: %w", st.Name, err)
	}
	req := spec.request(e.t.p)
	key := spec.key
	e.mu.Lock()
	if key != "" {
		e.used[key] = true
	}
	e.mu.Unlock()
	timeout := e.t.storeAttemptTimeout(st, e.t.attemptTimeout(st.Hook, e.held() && st.Name == e.sc.Steps[0].Name))
	one := func(i int) {
		client := 0
		if n > 1 {
			client = i
		}
		e.rec.invoke(client, attempt, key, st.Name)
		invoked.Done()
		op, err := e.t.sendAttempt(ctx, e.sender, req, timeout)
		done := e.rec.complete(client, attempt, key, st.Name, op)
		e.mu.Lock()
		if err != nil && e.sendErr == nil {
			e.sendErr = fmt.Errorf("step %s: %w", st.Name, err)
		}
		if e.firstAnswer.IsZero() {
			e.firstAnswer = done
		}
		if done.After(e.lastAnswer) {
			e.lastAnswer = done
		}
		e.mu.Unlock()
	}
	if n == 1 {
		one(0)
		return e.stepErr(ctx)
	}
	start := make(chan struct{})
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n, e.burst); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range work {
				one(i)
			}
		}()
	}
	close(start)
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return e.stepErr(ctx)
}

// stepErr is why the run cannot go on after a step: the context ended, or an attempt
// could not be made at all (an MCP session could not be set up).
func (e *execution) stepErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sendErr
}

// journalKeys lists the keys to read the journal for (a quoted key also under its bare
// form, as the proxy may parse the sf-string) and how many keyed attempts went through
// the proxy.
func (e *execution) journalKeys(h []verdict.Op) ([]string, int) {
	var keys []string
	seen := map[string]bool{}
	for k := range e.used {
		for _, v := range []string{k, strings.Trim(k, `"`)} {
			if v != "" && !seen[v] {
				seen[v] = true
				keys = append(keys, v)
			}
		}
	}
	direct := map[string]bool{}
	for _, st := range e.sc.Steps {
		if st.Direct && e.t.p.BaseURL != "" {
			direct[st.Name], direct[st.Name+againSuffix] = true, true
		}
	}
	sent := 0
	for _, op := range h {
		if op.Type == verdict.OpInvoke && op.Key != "" && !direct[op.Step] {
			sent++
		}
	}
	return keys, sent
}

// keepHeaders are the response headers the history keeps: what replay checks compare.
func (t *target) keepHeaders() []string {
	keep := []string{"Content-Type", "Location", "Retry-After"}
	if t.p.Expect.ReplayHeader != "" {
		keep = append(keep, t.p.Expect.ReplayHeader)
	}
	keep = append(keep, t.p.Expect.ReplayHeaders...)
	// The headers the outcome rules read: an answer told by one shows it in the
	// evidence, and a checker can class it again from the record (opAnswer).
	return append(keep, t.p.OutcomeHeaders()...)
}
