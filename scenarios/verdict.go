package scenarios

import "fmt"

// finding builds checker results with categories and examples.
type finding struct {
	ev Evidence
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

func (f *finding) result(v Verdict, format string, args ...any) (Verdict, string, Evidence) {
	return v, fmt.Sprintf(format, args...), f.ev
}

// unknownLedger is the answer of every checker that needs the ledger when the probe
// failed: an unreadable ledger is never a pass.
func unknownLedger(r Record) (Verdict, string, Evidence) {
	return Unknown, "ledger probe failed: " + r.LedgerErr, Evidence{}
}

// missed turns a missed requirement into the verdict its level calls for.
func missed(l Level) Verdict {
	switch l {
	case LevelShould:
		return NonStrict
	case LevelPolicy:
		return Info
	}
	return Fail
}
