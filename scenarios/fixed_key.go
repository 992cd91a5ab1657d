package scenarios

import (
	"regexp"
	"strings"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// Two scenarios send a key that is the same in every run: key/empty (the key header
// present and empty) and key/empty-quoted (the sf-string "" of the empty string). Every
// other key is minted fresh (doc.go), but these cannot be: a target that takes either
// for an ordinary key keeps the record an earlier run (or another target's run against
// the same API) left under it, for the whole retention, and this run's request meets
// it. What answers it then is that record, not this run's request, so it is reported,
// never passed or failed on.

// harnessEntity matches an entity the runner mints (ip-<nonce>-<target>-<scenario>).
var harnessEntity = regexp.MustCompile(`ip-[0-9a-f]{8}-[0-9]+-[0-9]{3}`)

// fixedKeyForeign says why an answer to a fixed key belongs to a record this run did not
// leave: a refusal as in flight (another request under the key is running), a success
// that names another entity the runner minted, or a success with no effect for this
// run's entity while nothing of this run executed under the key. "" when every answer
// may be this run's own.
func fixedKeyForeign(r verdict.Record, answers []verdict.Op) string {
	n := r.Ledger[verdict.LedgerOperation]
	for _, a := range answers {
		switch {
		case a.Type == verdict.OpInvoke || !a.Class.Determinate():
		case a.Class == outcome.InFlight:
			return "it was refused as in flight (" + describe(a) + "): another request under the same key was running"
		case !isSuccess(a):
		case otherEntityIn(a.Body, r.Entity) != "":
			return "it was answered " + itoa(a.Status) + " with another entity's response (" + otherEntityIn(a.Body, r.Entity) + ", not this run's " + r.Entity + ")"
		case n == 0:
			return "it was answered " + itoa(a.Status) + " while nothing executed for this run's entity (the ledger shows no side effect): a record an earlier request left answered it"
		}
	}
	return ""
}

// otherEntityIn is the first entity the runner minted that body names and that is not
// this run's, or "".
func otherEntityIn(body []byte, own string) string {
	for _, m := range harnessEntity.FindAll(body, -1) {
		if e := string(m); e != own && !strings.HasPrefix(e, own) {
			return e
		}
	}
	return ""
}

// fixedKeyMismatch is the answer to a fixed key refused with the profile's mismatch
// class, if one was: a refusal of the key, or a record an earlier run left under it
// that this run's request (another entity, so another payload) does not match. The two
// look alike from here.
func fixedKeyMismatch(answers []verdict.Op) (verdict.Op, bool) {
	for _, a := range answers {
		if a.Type != verdict.OpInvoke && a.Class == outcome.Mismatch {
			return a, true
		}
	}
	return verdict.Op{}, false
}

// judgeFixedKey is the verdict on a fixed key's answers that may not be this run's own:
// INFO naming why, or decided false when every answer may be. key names the key in the
// messages ("the key \"\"", "the empty key").
func judgeFixedKey(r verdict.Record, p *profile.Profile, answers []verdict.Op, key string) (verdict.Verdict, string, verdict.Evidence, bool) {
	var f finding
	if why := fixedKeyForeign(r, answers); why != "" {
		v, msg, ev := f.result(verdict.Info, "%s is the same in every run, and this run's request met a record it did not leave: %s; so the target keeps it as a key (for an earlier run or another client), and this run has nothing of its own to judge (a run after that record's retention judges the key)", key, why)
		return v, msg, ev, true
	}
	if m, ok := fixedKeyMismatch(answers); ok {
		v, msg, ev := f.result(verdict.Info, "%s was refused with %s, the answer the profile declares for another payload under a used key: either the target refuses the key, or the key is the same in every run and a record an earlier request left under it does not match this run's payload (another entity); the two cannot be told apart here, so nothing is passed (expect.mismatch %d%s)",
			key, describe(m), p.Expect.Mismatch, mismatchSharedNote(p))
		return v, msg, ev, true
	}
	return "", "", verdict.Evidence{}, false
}

// mismatchSharedNote names the other refusals the mismatch status also stands for.
func mismatchSharedNote(p *profile.Profile) string {
	var also []string
	if p.Expect.MissingKey == itoa(p.Expect.Mismatch) {
		also = append(also, "expect.missing_key")
	}
	if p.Validation != nil && p.Validation.Status == p.Expect.Mismatch {
		also = append(also, "validation_error.status")
	}
	if len(also) == 0 {
		return ""
	}
	return ", the status of " + strings.Join(also, " and ") + " too"
}
