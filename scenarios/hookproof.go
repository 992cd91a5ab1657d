package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
)

// A test hook the profile declares (slow_operation, fail_operation, crash) is what the
// race, storage and recovery scenarios reason from: a repeat "during the original" is
// one only if the slow hook held the original, a retry "after a crash" only if something
// crashed. A declaration is evidence only once the run has seen it act, so before any
// scenario the hooks the selected scenarios use are proven (ProveHooks), each once, on
// a fresh key of its own, through the fault proxy whose journal times them:
//
//   - slow_operation must hold the work at least half the declared hold (the journal's
//     upstream time; a loaded machine makes work slower, never faster, so only a lower
//     bound is safe);
//   - fail_operation must fail the work: a server error, with the declared status when
//     its value is one;
//   - crash.after_key and crash.after_commit must abandon the request: no complete
//     answer of the target's reaches the client (a closed connection, or a process that
//     exits).
//
// A hook in the path form, the query form or the field form changes the request itself:
// a target that scopes keys by path, or fingerprints the query or the body, takes the
// hooked request for another operation than operation.path's, and a scenario that sends
// its original hooked and its retries plain compares two operations. The proof sends one key to the plain form and
// then to the hooked form: the hooked request must be taken for the same one (replayed,
// no new effect). A plain repeat afterwards replaying tells "another operation" from a
// target that honours no key at all (whose scenarios must still fail).

// UnprovenHooks says what a declared hook that did not act in the proof does to a run.
type UnprovenHooks string

const (
	// UnprovenHooksStop (the default): the run stops before any scenario, with a
	// *PreflightError naming the hook and what was seen (`idemproof check` exits 2).
	UnprovenHooksStop UnprovenHooks = "stop"
	// UnprovenHooksNA: the scenarios that use the hook are N/A, naming it.
	UnprovenHooksNA UnprovenHooks = "na"
)

// ParseUnprovenHooks reads the --unproven-hooks value: "stop" (or "") or "na".
func ParseUnprovenHooks(s string) (UnprovenHooks, error) {
	switch UnprovenHooks(s) {
	case "", UnprovenHooksStop:
		return UnprovenHooksStop, nil
	case UnprovenHooksNA:
		return UnprovenHooksNA, nil
	}
	return "", fmt.Errorf("%q: want stop (a hook that does not act stops the run) or na (its scenarios are N/A)", s)
}

// The hooks a profile declares, by the field that declares them.
const (
	hookFieldSlow        = "slow_operation"
	hookFieldFail        = "fail_operation"
	hookFieldCrashKey    = "crash.after_key"
	hookFieldCrashCommit = "crash.after_commit"
)

// HookCheck is what the proof saw of one declared hook.
type HookCheck struct {
	// Hook is the profile field that declares it: slow_operation, fail_operation,
	// crash.after_key or crash.after_commit.
	Hook string `json:"hook"`
	// Acted: the hook did what it declares.
	Acted bool `json:"acted"`
	// Untold: the hooked request was refused or failed, and so was the operation sent
	// plain: the operation itself fails for the proof's request (a key shape the target
	// refuses); or a failure hook's request got no answer in any of its tries: so
	// whether the hook acts cannot be told here. Nothing stops or is N/A for
	// it; the scenarios' own journal checks judge it.
	Untold bool `json:"untold,omitempty"`
	// Seen is what the proof saw, in words.
	Seen string `json:"seen"`
	// OtherOperation, when set, says why the hook's path, query or field form is another
	// operation for the target: the key sent plain, then hooked, was not taken for one
	// request. The scenarios that use the hook are then UNKNOWN, saying so.
	OtherOperation string `json:"other_operation,omitempty"`
}

// HookProof is what ProveHooks saw of one target's hooks.
type HookProof struct {
	Target string      `json:"target"`
	Checks []HookCheck `json:"checks"`
}

// check is the proof of one hook field, or nil when it was not proven (not used by the
// scenarios that ran it, or no proof was made).
func (hp *HookProof) check(field string) *HookCheck {
	if hp == nil {
		return nil
	}
	for i := range hp.Checks {
		if hp.Checks[i].Hook == field {
			return &hp.Checks[i]
		}
	}
	return nil
}

// Notes are what a run should tell its user of the proof: the hooks that did not act
// (their scenarios N/A), and the forms that are another operation.
func (hp *HookProof) Notes() []string {
	if hp == nil {
		return nil
	}
	var out []string
	for _, c := range hp.Checks {
		switch {
		case c.Untold:
			out = append(out, fmt.Sprintf("%s could not be proven: %s", c.Hook, c.Seen))
		case !c.Acted:
			out = append(out, fmt.Sprintf("%s did not act: %s; its scenarios are N/A (--unproven-hooks na)", c.Hook, c.Seen))
		}
		if c.OtherOperation != "" {
			out = append(out, fmt.Sprintf("%s: %s; its scenarios are UNKNOWN", c.Hook, c.OtherOperation))
		}
	}
	return out
}

// hookFields are the profile fields a step's hook uses.
func hookFields(h Hook) []string {
	switch h {
	case HookSlow, HookSlowPastLock, HookSlowPastTimeout, HookSlowPastTimeoutWaited:
		return []string{hookFieldSlow}
	case HookFail:
		return []string{hookFieldFail}
	case HookSlowFail:
		return []string{hookFieldSlow, hookFieldFail}
	case HookCrashAfterKey:
		return []string{hookFieldCrashKey}
	case HookCrashAfterCommit:
		return []string{hookFieldCrashCommit}
	}
	return nil
}

// scenarioHooks are the hook fields a scenario's steps use, in step order, once each.
func scenarioHooks(sc Scenario) []string {
	var out []string
	for _, st := range sc.Steps {
		for _, f := range hookFields(st.Hook) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// hookOf is the scenario hook that exercises a field as declared.
func hookOf(field string) Hook {
	switch field {
	case hookFieldSlow:
		return HookSlow
	case hookFieldFail:
		return HookFail
	case hookFieldCrashKey:
		return HookCrashAfterKey
	}
	return HookCrashAfterCommit
}

// ProveHooks exercises, once each on a fresh key and a fresh entity, every hook p
// declares that a scenario of list uses (a scenario N/A for a missing capability uses
// none), through a fault proxy (in-process, or the one p names), and says what each
// did. The crash hooks come last: a target whose crash exits its process is gone after
// them. A hook that did not act is an error (a *PreflightError naming the hook and what
// was seen) unless unproven is UnprovenHooksNA; the proof is returned either way.
func ProveHooks(ctx context.Context, p *profile.Profile, list []Scenario, unproven UnprovenHooks) (*HookProof, error) {
	proof := &HookProof{Target: p.Name}
	var fields []string
	for _, sc := range list {
		if p.MissingAll(sc.Needs) != "" {
			continue
		}
		for _, f := range scenarioHooks(sc) {
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	if len(fields) == 0 {
		return proof, nil
	}
	order := []string{hookFieldSlow, hookFieldFail, hookFieldCrashKey, hookFieldCrashCommit}
	slices.SortFunc(fields, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	t, err := openTarget(ctx, p, 1)
	if err != nil {
		return nil, fmt.Errorf("prove hooks: %w", err)
	}
	defer t.close()
	// One sender for the whole proof, as a scenario has one (MCP: one session per
	// principal): a key sent plain and then hooked meets one session.
	hp := &hookProver{t: t, nonce: newUUID()[:8], snd: t.tr.Open()}
	defer hp.snd.Close()
	for _, f := range fields {
		c, err := hp.prove(ctx, f)
		if err != nil {
			return nil, err
		}
		proof.Checks = append(proof.Checks, c)
	}
	if unproven == UnprovenHooksNA {
		return proof, nil
	}
	for _, c := range proof.Checks {
		if !c.Acted && !c.Untold {
			return proof, &PreflightError{Target: p.Name, Field: c.Hook, Msg: fmt.Sprintf("%s did not act: %s: the scenarios that reason from it would prove nothing; fix %s (does the target implement it, for this request?), or run with --unproven-hooks na to leave its scenarios N/A", c.Hook, c.Seen, c.Hook)}
		}
	}
	return proof, nil
}

// proofTries bounds how often the proof sends a failure hook's request that got no
// answer at all.
const proofTries = 3

// hookProver sends the proof's requests for one target.
type hookProver struct {
	t      *target
	snd    transport.Sender
	nonce  string
	entity string // the entity of the proof in progress: fresh for each hook
	n      int    // keys and entities minted so far
	// answered are the successes the proof's requests got so far: a fresh key answered
	// with one of them was answered from another key's record.
	answered []verdict.Op
}

// key mints the next fresh key, shaped as the scenarios' keys are.
func (hp *hookProver) key() scenarioKeys {
	hp.n++
	return mintKeys("hooks-"+hp.nonce, hp.n, hp.t.p.MaxKeyLen(), hp.t.p.UUIDKeys())
}

// freshEntity starts the proof of one hook on an entity of its own, as each scenario
// runs on one (a target may allow one operation per entity).
func (hp *hookProver) freshEntity(ctx context.Context) error {
	hp.n++
	entity, err := hp.t.createEntity(ctx, fmt.Sprintf("ip-hooks-%s-%03d", hp.nonce, hp.n))
	if err != nil {
		return &PreflightError{Target: hp.t.p.Name, Field: "entity_setup", Msg: fmt.Sprintf("prove the hooks: %v", err)}
	}
	hp.entity = entity
	return nil
}

// send sends the operation once with the key, hooked with h (HookNone: plain), and
// returns the client's answer, the proxy's record of it (ok false when the journal has
// none) and how long the client waited.
func (hp *hookProver) send(ctx context.Context, keys scenarioKeys, h Hook) (verdict.Op, faultproxy.Record, bool, time.Duration, error) {
	t := hp.t
	spec, err := t.stepRequest(t.proxyURL, hp.entity, keys, Step{Name: "hook-proof", Hook: h}, false)
	if err != nil {
		return verdict.Op{}, faultproxy.Record{}, false, 0, &PreflightError{Target: t.p.Name, Field: "operation", Msg: fmt.Sprintf("prove the hooks: build the request: %v", err)}
	}
	sent := time.Now()
	op, err := t.sendAttempt(ctx, hp.snd, spec.request(t.p), t.attemptTimeout(h, false))
	took := time.Since(sent)
	if isSuccess(op) {
		hp.answered = append(hp.answered, op)
	}
	if err != nil {
		return op, faultproxy.Record{}, false, took, &PreflightError{Target: t.p.Name, Field: "base_url", Msg: fmt.Sprintf("prove the hooks: could not send the operation: %v", err)}
	}
	recs, err := t.journalFor(ctx, []string{keys.main}, 1)
	if err != nil || len(recs) == 0 {
		return op, faultproxy.Record{}, false, took, nil
	}
	return op, recs[len(recs)-1], true, took, nil
}

// prove exercises one hook field and, for a path, query or field form, whether it keeps the
// request's identity.
func (hp *hookProver) prove(ctx context.Context, field string) (HookCheck, error) {
	h := hookOf(field)
	if err := hp.freshEntity(ctx); err != nil {
		return HookCheck{}, err
	}
	op, j, journaled, took, err := hp.send(ctx, hp.key(), h)
	if err != nil {
		return HookCheck{}, err
	}
	// A failure hook's request that got no answer (timed out on a loaded machine, the
	// connection cut) shows neither a failure nor a success: it is sent again, on an
	// entity and key of its own, a bounded number of times, and a hook never seen
	// answering is untold, not a hook that did not act.
	for try := 1; field == hookFieldFail && !op.Class.Determinate() && try < proofTries; try++ {
		if err := hp.freshEntity(ctx); err != nil {
			return HookCheck{}, err
		}
		if op, j, journaled, took, err = hp.send(ctx, hp.key(), h); err != nil {
			return HookCheck{}, err
		}
	}
	c := HookCheck{Hook: field}
	if field == hookFieldFail && !op.Class.Determinate() {
		c.Untold = true
		c.Seen = fmt.Sprintf("the hooked request was answered %s in each of %d tries: no answer was seen, so whether it acts cannot be told here (the scenarios' own checks judge it)", describe(op), proofTries)
		return c, nil
	}
	c.Acted, c.Seen = hp.acted(field, op, j, journaled, took)
	if why := hp.notTheHooks(op); !c.Acted && why != "" {
		// A fresh key answered as a used one: the target's key handling answered (keys
		// aliased on a reused connection, a store that mixes keys up), not the hook.
		c.Untold = true
		c.Seen += "; " + why + ", not the hook, so whether it acts cannot be told here (the scenarios' own journals judge the hook)"
		return c, nil
	}
	if !c.Acted && op.Class.Determinate() && !isSuccess(op) {
		// Refused or failed: by the hook's form, or by the operation itself? The same
		// request sent plain, with a key of its own, tells.
		plain, _, _, _, err := hp.send(ctx, hp.key(), HookNone)
		if err != nil {
			return c, err
		}
		if !isSuccess(plain) {
			c.Untold = true
			c.Seen += fmt.Sprintf("; the operation sent plain, with a key of its own, was answered %s too: the operation itself fails for the proof's request, so whether the hook acts cannot be told here (the scenarios' own checks judge it)", describe(plain))
		}
	}
	if !c.Acted || !changesIdentity(hp.t.p, field) {
		return c, nil
	}
	if err := hp.freshEntity(ctx); err != nil {
		return c, err
	}
	c.OtherOperation, err = hp.identity(ctx, field, h)
	return c, err
}

// notTheHooks says why the answer to a fresh key cannot be the hook's doing, or "": a
// rate limit refused it, it was refused as a repeat (in flight, or another payload under
// a used key), or it is a replay (marked so, or another of the proof's requests'
// response).
func (hp *hookProver) notTheHooks(op verdict.Op) string {
	p := hp.t.p
	switch {
	case op.Class == outcome.Throttled:
		return "the request was refused by a rate limit (" + describe(op) + "): the rate limit answered"
	case keyRefusal(op.Class):
		return "a fresh key was refused as if it had been used (" + describe(op) + "): the target's key handling answered"
	case !isSuccess(op):
		return ""
	case replayMarked(op, p):
		return "a fresh key was answered as a replay (" + p.Expect.ReplayHeader + "): the target's key handling answered"
	}
	for _, earlier := range hp.answered[:len(hp.answered)-1] {
		if sameResponse(p, op, earlier) || sameUnique(p, earlier, op) {
			return "a fresh key was answered with another key's response (" + itoa(op.Status) + " " + clip(op.Body) + "): the target's key handling answered"
		}
	}
	return ""
}

// acted judges one hooked request against what its hook declares.
func (hp *hookProver) acted(field string, op verdict.Op, j faultproxy.Record, journaled bool, took time.Duration) (bool, string) {
	p := hp.t.p
	answer := describe(op)
	switch field {
	case hookFieldSlow:
		hold := p.Slow.HoldDuration()
		held, where := took, "as the client waited"
		if journaled && j.ReachedUpstream && answeredBy(j, op) {
			// The exchange that carried the answer: the work's time at the target. (An
			// MCP server that closed its stream to be polled answered later, on another
			// exchange: the client's wait is then the measure.)
			held, where = millisDuration(j.UpstreamMillis), "at the target (the proxy's journal)"
		}
		switch {
		case held < hold/2:
			return false, fmt.Sprintf("the hooked request was answered %s after %s %s, and slow_operation declares a hold of %s (at least %s expected)", answer, roundDuration(held), where, hold, hold/2)
		case op.Class.Refusal():
			return false, fmt.Sprintf("the hooked request was refused: %s, after %s %s (a refused request holds no work)", answer, roundDuration(held), where)
		}
		return true, fmt.Sprintf("held the work %s %s (declared %s)", roundDuration(held), where, hold)
	case hookFieldFail:
		want, declared := p.FailStatus()
		switch {
		case op.Class != outcome.ServerError:
			return false, fmt.Sprintf("the hooked request was answered %s, not a server error", answer)
		case declared && op.Status >= 500 && op.Status != want:
			return false, fmt.Sprintf("the hooked request was answered %s, and the hook asks for %d (if the target answers its injected failure with another status, declare that one as fail_operation's value)", answer, want)
		}
		return true, "failed the work: " + answer
	}
	// A crash: no complete answer of the target's reached the client.
	if journaled {
		if deliveredByTarget(j) {
			return false, fmt.Sprintf("the hooked request was answered %d by the target and delivered (the proxy's journal): nothing crashed", j.UpstreamStatus)
		}
		return true, "abandoned the request: " + journalEnd(j)
	}
	if op.Class.Determinate() && !gatewayStatus(op.Status) {
		return false, fmt.Sprintf("the hooked request was answered %s: nothing crashed", answer)
	}
	return true, "abandoned the request: " + answer
}

// journalEnd says how the proxy saw an abandoned request end.
func journalEnd(j faultproxy.Record) string {
	if j.Note != "" {
		return j.Note
	}
	return "the client got " + j.ClientResult
}

// changesIdentity reports whether a hook's form changes the request beyond a header: a
// path that replaces operation.path, query parameters added to it, or a member added to
// its body (which a target that fingerprints the whole body, or the whole tools/call,
// takes for another payload).
func changesIdentity(p *profile.Profile, field string) bool {
	f := hookFormOf(p, field)
	return f.Path != "" || len(f.Query) > 0 || f.Field != ""
}

// identity sends one key plain, then hooked: the target must take the hooked request for
// the one it has a record of (a success, no new effect). Anything else is another
// operation, once a plain repeat shows the target honours the key at all; "" when the
// form keeps the request's identity, or when nothing could tell.
func (hp *hookProver) identity(ctx context.Context, field string, h Hook) (string, error) {
	p, t := hp.t.p, hp.t
	f := hookFormOf(p, field)
	form := "path"
	switch {
	case f.Field != "":
		form = "field"
	case f.Path == "":
		form = "query"
	}
	count := func() (int, bool) {
		n, err := t.readLedger(ctx, p.SideEffects, hp.entity)
		return n, err == nil
	}
	keys := hp.key()
	before, ok := count()
	if !ok {
		return "", nil
	}
	plain, _, _, _, err := hp.send(ctx, keys, HookNone)
	if err != nil || !isSuccess(plain) {
		return "", err
	}
	afterPlain, ok := count()
	if !ok || afterPlain != before+1 {
		return "", nil // a ledger that lags, or counts more: nothing to tell by
	}
	hooked, _, _, _, err := hp.send(ctx, keys, h)
	if err != nil {
		return "", err
	}
	afterHooked, ok := count()
	if !ok {
		return "", nil
	}
	var what string
	switch {
	case isSuccess(hooked) && afterHooked == afterPlain:
		return "", nil // the same operation: its record answered
	case hooked.Class == outcome.Mismatch:
		what = fmt.Sprintf("refused as a changed request (%s): the %s is part of the target's fingerprint", describe(hooked), form)
	case afterHooked > afterPlain:
		what = fmt.Sprintf("executed again (%s, one more side effect)", describe(hooked))
	default:
		what = fmt.Sprintf("answered %s, not the key's committed response", describe(hooked))
	}
	// The target honours keys at all only if the plain form still replays.
	again, _, _, _, err := hp.send(ctx, keys, HookNone)
	if err != nil {
		return "", err
	}
	afterAgain, ok := count()
	if !ok || !isSuccess(again) || afterAgain != afterHooked {
		return "", nil // no key honoured even plain: the scenarios judge that
	}
	opPath := profileOpPath(p, hp.entity)
	if form == "field" {
		return fmt.Sprintf("its field form puts %s into the request's body, which the target takes for another operation than its %s without it: the same key, sent plain and then hooked, was %s, while a plain repeat replayed; a scenario that sends its original hooked and its retries plain would compare two operations; declare the hook in a field the target leaves out of its fingerprint (as it does the key; over MCP, _meta), or in the header form (docs/profiles.md, \"Test hooks\")",
			f.Field, operationName(p, opPath), what), nil
	}
	hookedPath := opPath
	if sh, ok, _ := t.stepHook(h, hp.entity); ok {
		hookedPath = sh.onPath(opPath)
	}
	return fmt.Sprintf("its %s form sends the hooked request to %s, which the target takes for another operation than %s %s: the same key, sent plain and then hooked, was %s, while a plain repeat replayed; a scenario that sends its original hooked and its retries plain would compare two operations; declare the hook in the header form, or a query form the target leaves out of its key's scope and fingerprint (docs/profiles.md, \"Test hooks\")",
		form, hookedPath, p.Operation.Method, opPath, what), nil
}

// hookFormOf is the form of a hook field's declaration.
func hookFormOf(p *profile.Profile, field string) profile.HookForm {
	switch field {
	case hookFieldSlow:
		return p.Slow.Form()
	case hookFieldFail:
		return p.FailHook.Form()
	}
	return p.Crash.Form()
}

// operationName names the operation as a reader knows it: its tool over MCP, else its
// method and path.
func operationName(p *profile.Profile, opPath string) string {
	if p.IsMCP() {
		return "tool call " + p.Operation.Tool
	}
	return p.Operation.Method + " " + opPath
}

// profileOpPath is operation.path rendered for an entity (the template as written when
// it does not render).
func profileOpPath(p *profile.Profile, entity string) string {
	path, err := profile.Render(p.Operation.Path, entity)
	if err != nil {
		return p.Operation.Path
	}
	return path
}

// hookPremise is the verdict a scenario gets before it runs when a hook it uses was not
// proven: N/A when the hook did not act (the run chose --unproven-hooks na), UNKNOWN when
// its form is another operation for the target. ok false: run the scenario.
func (t *target) hookPremise(sc Scenario) (verdict.Verdict, string, bool) {
	for _, field := range scenarioHooks(sc) {
		c := t.hooks.check(field)
		switch {
		case c == nil || c.Untold:
		case !c.Acted:
			return verdict.NA, fmt.Sprintf("needs %s to act, and it did not in the preflight: %s", field, c.Seen), true
		case c.OtherOperation != "":
			return verdict.Unknown, fmt.Sprintf("%s: %s", field, c.OtherOperation), true
		}
	}
	return "", "", false
}
