package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// keepAliveKeys is how many distinct keys race/keepalive-many-keys sends on each route.
const keepAliveKeys = 200

func keepAliveScenarios() []Scenario {
	return []Scenario{{
		ID:          "race/keepalive-many-keys",
		Description: fmt.Sprintf("%d distinct keys over at most %d reused keep-alive connections, through the proxy and directly: each executes once", keepAliveKeys, MaxKeepAliveConns),
		Requirement: "keys arriving one after another on a reused connection never alias: each key executes once and its repeat replays its own response",
		Source:      and(srcDraftUniqueness, srcSeed),
		Level:       verdict.LevelSafety,
		Labels:      []string{"group:race", "fault:none", "level:safety"},
		Needs:       []profile.Capability{profile.CapHTTPConnections},
		Steps: []Step{
			{Name: "proxied", Copies: keepAliveKeys, KeySet: "p", KeepAlive: true, Twice: true},
			{Name: "direct", Copies: keepAliveKeys, KeySet: "d", KeepAlive: true, Twice: true, Direct: true},
		},
		Check: keepAliveManyKeys,
	}}
}

// keyPair is what one key of a key set got: its first answer and its repeat's.
type keyPair struct {
	first, again               verdict.Op
	firstInvoked, againInvoked time.Time
}

// repeatMayBeLate reports whether the repeat may have reached the target after the
// declared retention of its key, where it may execute anew with a response of its own.
func (kp *keyPair) repeatMayBeLate(p *profile.Profile) bool {
	end := kp.again.Time
	if end.IsZero() {
		end = kp.againInvoked
	}
	return pastRetention(p, kp.firstInvoked, end)
}

func keyPairs(r verdict.Record, step string) map[string]*keyPair {
	pairs := map[string]*keyPair{}
	get := func(k string) *keyPair {
		if pairs[k] == nil {
			pairs[k] = &keyPair{}
		}
		return pairs[k]
	}
	for _, op := range r.History {
		switch {
		case op.Step == step && op.Type == verdict.OpInvoke:
			get(op.Key).firstInvoked = op.Time
		case op.Step == step:
			get(op.Key).first = op
		case op.Step == step+againSuffix && op.Type == verdict.OpInvoke:
			get(op.Key).againInvoked = op.Time
		case op.Step == step+againSuffix:
			get(op.Key).again = op
		}
	}
	return pairs
}

// keepAliveManyKeys: every key whose success was seen has its own side effect (the
// ledger holds at least that many), no key executed twice (at most one effect per key
// whose outcome may have been an execution), and every repeat replays its own key's
// first response. A timed-out attempt (info) may or may not have executed; it widens
// the allowed count and never fails the scenario by itself.
func keepAliveManyKeys(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	seen, maybe, infos, keys := 0, 0, 0, 0
	// compared: pairs whose repeat was judged against its first answer; lateDiffer: pairs
	// whose repeat differs but may have arrived after the retention (not judged).
	compared, lateDiffer := 0, 0
	var serverErrs, aliased, refusedAgain []string
	// The answers a FAIL blames.
	var serverOps, aliasedOps, divergedOps, firstOps []verdict.Op
	bodies := map[string]string{} // first success body -> key, across both routes
	for _, route := range []string{"proxied", "direct"} {
		pairs := keyPairs(r, route)
		keys += len(pairs)
		for key, kp := range pairs {
			for _, op := range []verdict.Op{kp.first, kp.again} {
				switch {
				case !op.Class.Determinate():
					infos++
				case op.Class == outcome.ServerError:
					serverErrs = append(serverErrs, route+" "+describe(op))
					serverOps = append(serverOps, op)
				case op.Class == outcome.InFlight && op.Step == route+againSuffix && kp.first.Class.Determinate():
					// A repeat sent after its key's first answer, refused as in flight: the
					// target knew the key (a fresh one would have run), so it is no proof of
					// aliasing; it was not replayed either (a target that refuses every
					// repeat, as moov-io/base's idempotent does with 412). Reported, not
					// compared.
					refusedAgain = append(refusedAgain, fmt.Sprintf("%s key %s got %s", route, key, describe(op)))
				case keyRefusal(op.Class):
					aliased = append(aliased, fmt.Sprintf("%s key %s got %s", route, key, describe(op)))
					aliasedOps = append(aliasedOps, op)
				}
			}
			firstOK, againOK := kp.first.Class == outcome.Success, kp.again.Class == outcome.Success
			// A repeat that may have arrived after the declared retention may execute
			// anew: one more side effect, and a response of its own.
			late := kp.repeatMayBeLate(p)
			switch {
			case firstOK || againOK:
				seen++
				if late {
					maybe++
				}
			case !kp.first.Class.Determinate() || !kp.again.Class.Determinate():
				maybe++
			}
			if firstOK {
				if other, dup := bodies[string(kp.first.Body)]; dup {
					f.example("%s key %s got the same response as key %s: %s", route, key, other, clip(kp.first.Body))
				} else {
					bodies[string(kp.first.Body)] = key
				}
			}
			switch {
			case !firstOK || !againOK:
			case sameResponse(p, kp.again, kp.first):
				compared++
			case late:
				lateDiffer++
			default:
				compared++
				f.count(verdict.CatDiverged, 1)
				divergedOps, firstOps = append(divergedOps, kp.again), append(firstOps, kp.first)
				f.example("%s key %s: first %d %s, repeat %d %s", route, key, kp.first.Status, clip(kp.first.Body), kp.again.Status, clip(kp.again.Body))
			}
		}
	}
	// A step outside the key sets (a settle step with the scenario's own key) may add
	// one effect of its own per answer that was a success or unseen.
	for _, op := range r.History {
		switch op.Step {
		case "proxied", "proxied" + againSuffix, "direct", "direct" + againSuffix:
		default:
			if op.Type != verdict.OpInvoke && (op.Class == outcome.Success || !op.Class.Determinate()) {
				maybe++
			}
		}
	}
	n := r.Ledger[verdict.LedgerOperation]
	timedOut := ""
	var keyOps []verdict.Op
	for _, op := range r.History {
		if op.Type != verdict.OpInvoke && (strings.HasPrefix(op.Step, "proxied") || strings.HasPrefix(op.Step, "direct")) {
			keyOps = append(keyOps, op)
		}
	}
	if infos > 0 {
		timedOut = "; " + describeUnseen(keyOps)
	}
	throttled := countClass(keyOps, outcome.Throttled)
	// What the INFO and PASS texts claim is what was seen: the keys seen to execute, and
	// the repeats that were compared with their key's first response.
	replayed := "each repeat replayed its own response"
	switch {
	case compared == 0:
		replayed = "no repeat was compared with its key's first response"
	case compared < keys:
		replayed = fmt.Sprintf("each of the %d repeats compared replayed its own response (%d of the %d not compared)", compared, keys-compared, keys)
	}
	if lateDiffer > 0 {
		timedOut += fmt.Sprintf("; %d repeats got a response of their own but %s (not judged)", lateDiffer, mayBeLate("they", p))
	}
	executed := fmt.Sprintf("each of the %d keys executed once", keys)
	if seen < keys {
		executed = fmt.Sprintf("the %d of the %d keys seen to succeed executed once each", seen, keys)
	}
	switch {
	case len(serverErrs) > 0:
		for _, op := range serverOps {
			f.blame(op, "a success of its own key")
		}
		return f.result(verdict.Fail, "%d answers were a 5xx from the target (%s)", len(serverErrs), serverErrs[0])
	case len(aliased) > 0:
		f.count(verdict.CatLeaked, len(aliased))
		for _, op := range aliasedOps {
			f.blame(op, "a success of its own: a fresh key")
		}
		return f.result(verdict.Fail, "fresh keys refused as if they were another key's: %d; the first: %s", len(aliased), aliased[0])
	case f.ev.Categories[verdict.CatDiverged] > 0:
		for i, op := range divergedOps {
			f.blameAgainst(op, "its own key's first response replayed", &firstOps[i])
		}
		return f.result(verdict.Fail, "%d repeats did not replay their own key's response%s", f.ev.Categories[verdict.CatDiverged], statusOnlyNote(p, firstOps[0], divergedOps[0], "its key's first", true))
	case n < seen:
		f.count(verdict.CatLost, seen-n)
		return f.result(verdict.Fail, "%d keys were answered a success but the ledger shows %d side effects: %d keys never executed (aliased to another key's record)", seen, n, seen-n)
	case n > seen+maybe:
		f.count(verdict.CatDuplicated, n-seen-maybe)
		return f.result(verdict.Fail, "%d side effects for %d keys: a key executed more than once", n, seen+maybe)
	case seen == 0:
		return f.result(verdict.Unknown, "no success was seen for any of the %d keys%s", keys, timedOut)
	case throttled > 0 && seen < keys/2:
		return f.result(verdict.Info, "only %d of the %d keys were seen executing%s: too few to show that keys on a reused connection never alias", seen, keys, timedOut)
	case compared == 0 && lateDiffer > 0:
		return f.result(verdict.Unknown, "no repeat could be judged against its key's first response%s", timedOut)
	case len(refusedAgain) > 0:
		// Each key ran once and none was refused as another key's, but a repeat the
		// target refused was not replayed: whether it would have got its own response
		// on a reused connection was not seen.
		return f.result(verdict.Info, "%s and no fresh key was refused, but %d repeats sent after their key's answer were refused as in flight instead of replayed (the first: %s): the target knew each key, yet whether a repeat on a reused connection gets its own key's response was not seen (replay/* judges the refusal); %s%s",
			executed, len(refusedAgain), refusedAgain[0], replayed, timedOut)
	case p.BaseURL == "":
		return f.result(verdict.Info, "%s and %s through the proxy, but the profile declares no base_url: the direct route went through the proxy too, which keeps its own connections alive, so whether keys sharing one of the target's connections alias was not seen%s",
			executed, replayed, timedOut)
	case !targetKeptAlive(r):
		return f.result(verdict.Info, "%s and %s, but the target kept no connection alive (no direct attempt went over a reused one): keys sharing a connection was not exercised%s",
			executed, replayed, timedOut)
	case maybe > 0 && n > seen:
		return f.result(verdict.Pass, "%d keys over at most %d keep-alive connections per route (through the proxy and direct): %d side effects, %s%s",
			keys, MaxKeepAliveConns, n, replayed, timedOut)
	}
	return f.result(verdict.Pass, "%d keys over at most %d keep-alive connections per route (through the proxy and direct): one side effect each, %s%s",
		keys, MaxKeepAliveConns, replayed, timedOut)
}

// targetKeptAlive reports whether the direct route shows the target reusing a
// connection: keys can alias only on a connection that carries more than one request.
// Through the proxy the client's connections are the proxy's, which always keeps them
// alive, so only direct attempts tell. Without a base_url the checker says so before it
// asks; a direct attempt found in the journal (a base_url that is the proxy itself) or a
// direct step that sent nothing leaves nothing to tell by, and counts as kept alive.
func targetKeptAlive(r verdict.Record) bool {
	inJournal := map[string]bool{}
	for _, j := range r.Journal {
		inJournal[j.Key] = true
	}
	direct := 0
	for _, op := range r.History {
		if op.Type == verdict.OpInvoke || (op.Step != "direct" && op.Step != "direct"+againSuffix) {
			continue
		}
		if inJournal[op.Key] {
			return true // the direct step went through the proxy: nothing to tell
		}
		if op.ReusedConn {
			return true
		}
		direct++
	}
	return direct == 0
}
