package scenarios

import (
	"fmt"

	"github.com/idemproof/idemproof/verdict"
)

// finding builds checker results with categories and examples.
type finding struct {
	ev verdict.Evidence
}

func (f *finding) count(cat string, n int) {
	if n <= 0 {
		return
	}
	if f.ev.Categories == nil {
		f.ev.Categories = map[string]int{}
	}
	f.ev.Categories[cat] += n
}

func (f *finding) example(format string, args ...any) {
	if len(f.ev.Examples) < 8 {
		f.ev.Examples = append(f.ev.Examples, fmt.Sprintf(format, args...))
	}
}

// blame marks op (a completion event) as an attempt that broke the rule, want saying
// what it should have got.
func (f *finding) blame(op verdict.Op, want string) {
	f.blameAgainst(op, want, nil)
}

// blameAgainst is blame for an answer that should have equalled a committed response.
func (f *finding) blameAgainst(op verdict.Op, want string, committed *verdict.Op) {
	if op.Type == verdict.OpInvoke || len(f.ev.Blame) >= maxBlame {
		return
	}
	for _, b := range f.ev.Blame {
		if b.Index == op.Index {
			return
		}
	}
	b := verdict.Blame{Index: op.Index, Want: want}
	if committed != nil {
		b.Committed = &verdict.Response{Status: committed.Status, Body: committed.Body}
	}
	f.ev.Blame = append(f.ev.Blame, b)
}

// maxBlame bounds the blamed attempts of one result: a burst of 1,000 wrong answers is
// shown by its first ones.
const maxBlame = 8

func (f *finding) result(v verdict.Verdict, format string, args ...any) (verdict.Verdict, string, verdict.Evidence) {
	return v, fmt.Sprintf(format, args...), f.ev
}

// unknownLedger is the answer of every checker that needs the ledger when the probe
// failed: an unreadable ledger is never a pass.
func unknownLedger(r verdict.Record) (verdict.Verdict, string, verdict.Evidence) {
	return verdict.Unknown, "ledger probe failed: " + r.LedgerErr, verdict.Evidence{}
}

// missed turns a missed requirement into the verdict its level calls for.
func missed(l verdict.Level) verdict.Verdict {
	switch l {
	case verdict.LevelShould:
		return verdict.NonStrict
	case verdict.LevelPolicy:
		return verdict.Info
	}
	return verdict.Fail
}
