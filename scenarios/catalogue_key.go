package scenarios

import (
	"strconv"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

func keyScenarios() []Scenario {
	return []Scenario{
		{
			ID:          "key/missing",
			Description: "a request without a key, twice",
			Requirement: "no key gets expect.missing_key (400) and does not execute; with \"optional\" each request executes: two identical requests without a key, two side effects",
			Source:      srcDraftErrors,
			Level:       verdict.LevelMust,
			Labels:      []string{"group:key", "fault:none", "level:must"},
			Steps:       []Step{{Name: "unkeyed", Key: KeyNone}, {Name: "unkeyed-again", Key: KeyNone}},
			Check:       missingKey,
		},
		{
			ID:          "key/empty",
			Description: "an empty key is refused, never used as a key",
			Requirement: "an empty key gets 400 and does not execute",
			Source:      srcDraftSyntax,
			Level:       verdict.LevelShould,
			Labels:      []string{"group:key", "fault:none", "level:should"},
			Steps:       []Step{{Name: "empty", Key: KeyEmpty}, {Name: "empty-again", Key: KeyEmpty}},
			Check:       refusedKey("empty", outcome.MissingKey, outcome.InvalidKey),
		},
		{
			ID:          "key/max-length",
			Description: "a key of the longest length the API accepts (255, or expect.max_key_length) is accepted and honoured",
			Requirement: "a key of the longest length (255 characters, or expect.max_key_length) works: one side effect, the repeat replays",
			Source:      srcStripe + " (keys up to 255 characters)",
			Level:       verdict.LevelShould,
			Labels:      []string{"group:key", "fault:none", "level:should"},
			Needs:       []profile.Capability{profile.CapKeyLengthLimit},
			Steps:       []Step{{Name: "original", Key: Key255}, {Name: "repeat", Key: Key255}},
			Check:       longKey,
		},
		{
			ID:          "key/over-length",
			Description: "a key one character too long (256, or expect.max_key_length + 1) is refused",
			Requirement: "a key one character over the longest (255, or expect.max_key_length) gets 400",
			Source:      srcStripe + " (keys up to 255 characters)",
			Level:       verdict.LevelShould,
			Labels:      []string{"group:key", "fault:none", "level:should"},
			Needs:       []profile.Capability{profile.CapKeyLengthLimit},
			Steps:       []Step{{Name: "long", Key: Key256}},
			Check:       refusedKey("long", outcome.InvalidKey),
		},
		{
			ID:          "key/control-chars",
			Description: "a key with a control character (TAB) is refused",
			Requirement: "a key that is not a valid sf-string gets 400",
			Source:      srcDraftSyntax,
			Level:       verdict.LevelShould,
			Labels:      []string{"group:key", "fault:none", "level:should"},
			Needs:       []profile.Capability{profile.CapFreeFormKeys},
			Steps:       []Step{{Name: "control", Key: KeyControl}},
			Check:       refusedKey("control", outcome.InvalidKey),
		},
		{
			ID:          "key/sf-string",
			Description: "the RFC 8941 quoted form \"abc\" against the bare form abc",
			Requirement: "the draft defines the key as an sf-string: the quoted form is the same key; the observed policy is reported",
			Source:      srcDraftSyntax,
			Level:       verdict.LevelPolicy,
			Labels:      []string{"group:key", "fault:none", "level:policy"},
			Needs:       []profile.Capability{profile.CapKeyHeader, profile.CapFreeFormKeys},
			Steps:       []Step{{Name: "quoted", Key: KeyQuoted}, {Name: "bare"}},
			Check:       sfString,
		},
		{
			ID:          "key/header-case",
			Description: "the key header name in lower case is the same header",
			Requirement: "header names are case-insensitive: a lower-case key header replays",
			Source:      srcRFC9110,
			Level:       verdict.LevelMust,
			Labels:      []string{"group:key", "fault:none", "level:must"},
			Needs:       []profile.Capability{profile.CapKeyHeader, profile.CapDirectRoute},
			Steps:       []Step{{Name: "original"}, {Name: "repeat", Variant: VariantLowerCaseHeader, Direct: true}},
			Check:       identicalReplay("original", "repeat"),
		},
	}
}

func missingKey(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := stepAnswer(r, "unkeyed")
	b, again := stepAnswer(r, "unkeyed-again")
	n := r.Ledger[verdict.LedgerOperation]
	if p.Expect.MissingKey == "optional" {
		if !again {
			// A record of the single-request form: one execution is the whole claim.
			if isSuccess(a) && n == 1 {
				return f.result(verdict.Pass, "executed without a key (declared optional): %d, one side effect", a.Status)
			}
			if unseen(a) && n <= 1 {
				return f.result(verdict.Unknown, "the unkeyed request was not seen (%s): cannot tell", describe(a))
			}
			f.blame(a, "a success with one side effect (missing_key: optional)")
			return f.result(verdict.Fail, "declared optional, but got %s with %d side effects", describe(a), n)
		}
		switch {
		case isSuccess(a) && isSuccess(b) && n == 2:
			return f.result(verdict.Pass, "two identical requests without a key (declared optional) executed twice: %d and %d, two side effects", a.Status, b.Status)
		case isSuccess(a) && isSuccess(b) && n == 1:
			f.count(verdict.CatLost, 1)
			f.blame(b, "its own execution: a request without a key is no repeat of another")
			return f.result(verdict.Fail, "two identical requests without a key got %d and %d but made one side effect%s: a keyless request was taken for a repeat (a key made up from the payload?); missing_key: optional declares that each executes", a.Status, b.Status, sameBodyNote(p, a, b))
		case n <= 2 && (unseen(a) || unseen(b)):
			return f.result(verdict.Unknown, "a request without a key was not seen (%s, %s), %d side effect(s): cannot tell", describe(a), describe(b), n)
		}
		for _, o := range []verdict.Op{a, b} {
			if !isSuccess(o) {
				f.blame(o, "a success: its own execution (missing_key: optional)")
			}
		}
		return f.result(verdict.Fail, "declared optional, but two requests without a key got %s and %s with %d side effects, want two successes and two", describe(a), describe(b), n)
	}
	want, _ := strconv.Atoi(p.Expect.MissingKey)
	if n > 0 {
		f.blame(a, wantText(want, outcome.MissingKey)+", no execution")
		return f.result(verdict.Fail, "executed without a key (%d side effects, got %s); declared %s", n, describe(a), wantText(want, outcome.MissingKey))
	}
	ops := []verdict.Op{a}
	if again {
		ops = append(ops, b)
	}
	for _, o := range ops {
		if unseen(o) {
			return f.result(verdict.Unknown, "the unkeyed request was not seen (%s): whether it was refused cannot be told", describe(o))
		}
		if o.Class != outcome.MissingKey {
			f.blame(o, wantText(want, outcome.MissingKey))
			return f.result(verdict.Fail, "got %s, want %s", describe(o), wantText(want, outcome.MissingKey))
		}
	}
	return f.result(verdict.Pass, "refused with %s; nothing executed", describe(a))
}

// sameBodyNote says that the second answer was the first one's, byte for byte: a replay.
func sameBodyNote(p *profile.Profile, a, b verdict.Op) string {
	if sameResponse(p, a, b) {
		return " (the second answer is the first one's, byte for byte: a replay)"
	}
	return ""
}

// refusedKey: a malformed key should get 400 and never execute.
// refusedKey judges a malformed key's request, which a refusal other than "in flight"
// answers rightly; fits are the classes whose names describe the refusal of this key.
func refusedKey(step string, fits ...outcome.Class) Checker {
	return func(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
		if r.LedgerErr != "" {
			return unknownLedger(r)
		}
		var f finding
		a, _ := stepAnswer(r, step)
		if step == "empty" {
			// The empty key is the same in every run.
			answers := append(stepAnswers(r, step), stepAnswers(r, step+againSuffix)...)
			if v, msg, ev, decided := judgeFixedKey(r, p, answers, "the empty key"); decided {
				return v, msg, ev
			}
		}
		n := r.Ledger[verdict.LedgerOperation]
		// The malformed key is refused by any refusal other than "in flight": where
		// statuses coincide, a 400 may be classed as the missing key or a mismatch.
		refused := a.Class.Refusal() && a.Class != outcome.InFlight
		switch {
		case refused && n == 0:
			return f.result(verdict.Pass, "refused with %s; nothing executed", describeRefusal(a, fits...))
		case unseen(a) && n <= 1:
			return f.result(verdict.Unknown, "the answer was not seen (%s): whether the key was refused cannot be told", describe(a))
		case n > 1:
			// Not counted as duplicated: a target that ignores a malformed key executes
			// each request as unkeyed, which is what it chose, not a broken key.
			return f.result(verdict.NonStrict, "accepted (%s) and executed as unkeyed: %d side effects", describe(a), n)
		case n > 0:
			if again, ok := stepAnswer(r, step+"-again"); ok && isSuccess(a) && isSuccess(again) && sameResponse(p, a, again) {
				// Worse than executing unkeyed: the malformed key is a key, one every such
				// request of the principal shares.
				return f.result(verdict.NonStrict, "accepted and executed (%s), want a refusal (such as 400 invalid_key); the second request with it was answered the first one's response, byte for byte: the key was used as a key, shared by every request that sends it", describe(a))
			}
			return f.result(verdict.NonStrict, "accepted and executed (%s), want a refusal (such as 400 invalid_key)", describe(a))
		}
		return f.result(verdict.NonStrict, "got %s, want a refusal (such as 400 invalid_key)", describe(a))
	}
}

func longKey(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	a, _ := stepAnswer(r, "original")
	if unseen(a) {
		return f.result(verdict.Unknown, "the answer was not seen (%s): whether the %d-character key was accepted cannot be told", describe(a), p.MaxKeyLen())
	}
	if !isSuccess(a) {
		if p.Expect.MaxKeyLength == 0 {
			return f.result(verdict.NonStrict, "a 255-character key was refused: %s; an API whose keys are shorter declares expect.max_key_length (AWS's ClientToken: 64)", describe(a))
		}
		return f.result(verdict.NonStrict, "a %d-character key was refused: %s, though expect.max_key_length declares %d", p.MaxKeyLen(), describe(a), p.MaxKeyLen())
	}
	return identicalReplay("original", "repeat")(r, p)
}

func sfString(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	if r.LedgerErr != "" {
		return unknownLedger(r)
	}
	var f finding
	q, _ := stepAnswer(r, "quoted")
	b, _ := stepAnswer(r, "bare")
	n := r.Ledger[verdict.LedgerOperation]
	switch {
	case unseen(q) || unseen(b):
		return f.result(verdict.Unknown, "quoted %s, bare %s: an answer was not seen, cannot tell", describe(q), describe(b))
	case !isSuccess(q):
		return f.result(verdict.Info, "the quoted form was refused: %s", describe(q))
	case n == 1 && isSuccess(b) && sameBody(p, q.Body, b.Body):
		return f.result(verdict.Info, "the quoted and bare forms are the same key (replayed)")
	case n == 2:
		return f.result(verdict.Info, "the quoted and bare forms are different keys (both executed)")
	}
	return f.result(verdict.Info, "quoted %s, bare %s, %d side effects", describe(q), describe(b), n)
}
