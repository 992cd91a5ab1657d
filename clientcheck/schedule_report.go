package clientcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/verdict"
)

// IDFaultSchedule is the INFO result that says which faults were applied to what.
const IDFaultSchedule = "client/fault-schedule"

// AppliedSchedule is the fault schedule of a run as it was applied.
type AppliedSchedule struct {
	Spec  string   `json:"spec"`
	Seed  int64    `json:"seed"`
	Kinds []string `json:"kinds,omitempty"` // the kinds of the spec, in dealing precedence
	// Assignments is the kind each operation was dealt, in arrival order.
	Assignments []Assignment `json:"assignments,omitempty"`
	// Rules are the rules given as such (@FILE, Config.Faults), by name.
	Rules []string `json:"rules,omitempty"`
	// Restart is set when the run restarts the client (--restart or the restart kind):
	// then client/key-survives-restart judges it.
	Restart bool `json:"restart,omitempty"`
	// StandIns are the profile fields (expect.in_flight_body, expect.mismatch_body) a
	// 409 or 422 kind of the schedule would have taken the API's body from, and that the
	// profile leaves out: those kinds answer with client-check's problem+json, and a
	// client that decides by the body may treat the API's own refusal otherwise.
	StandIns []string `json:"stand_ins,omitempty"`
	// HoldMS is how long the hold kind held (ms), and HoldNote why that long.
	HoldMS   float64 `json:"hold_ms,omitempty"`
	HoldNote string  `json:"hold_note,omitempty"`
}

// standInNote is what a finding on a refusal the proxy sent adds when that refusal was
// client-check's problem+json rather than a body the profile declared for the API.
func (o *analysis) standInNote(faulted bool, field string) string {
	if !faulted || !slices.Contains(o.Schedule.StandIns, field) {
		return ""
	}
	return fmt.Sprintf("; those answers were client-check's problem+json stand-ins (the profile declares no %s): a client that decides by the body may treat the API's own otherwise, so declare the body the API sends", field)
}

// ScheduleLines describes the applied schedule, one line per operation (how many of
// its attempts each fault hit) and one per kind or rule that never fired and why.
func ScheduleLines(o Observation) []string {
	a := analyse(&o)
	s := o.Schedule
	applied := map[string]int{} // rule name → attempts faulted
	for _, r := range o.Attempts {
		if r.Rule != "" && r.Fault != "" {
			applied[r.Rule]++
		}
	}
	var lines []string
	if len(s.Rules) > 0 {
		for _, name := range s.Rules {
			lines = append(lines, fmt.Sprintf("rule %s: applied to %d attempt(s)", name, applied[name]))
		}
		return lines
	}
	fired := map[string]bool{}
	for _, as := range s.Assignments {
		kind := as.Kind
		if kind == "" && as.Dealt != "" {
			lines = append(lines, fmt.Sprintf("%s: dealt %s, spared by its probability", as.Operation, as.Dealt))
			continue
		}
		if kind == "" {
			lines = append(lines, fmt.Sprintf("%s: no fault", as.Operation))
			continue
		}
		n, waitedOut := 0, 0
		for _, r := range a.attempts[as.Operation] {
			if (r.Rule == "client-check-"+kind || r.Rule == "client-check-"+kind+keylessSuffix) && r.Fault != "" {
				n++
				if kind == "hold" && r.ClientResult != faultproxy.ClientTimedOut {
					waitedOut++
				}
			}
		}
		if n > 0 {
			fired[kind] = true
		}
		what := kind
		if kind == "hold" && s.HoldMS > 0 {
			what = fmt.Sprintf("hold (%s: %s)", span(time.Duration(s.HoldMS*float64(time.Millisecond))), s.HoldNote)
		}
		line := fmt.Sprintf("%s: %s, applied to %d attempt(s)", as.Operation, what, n)
		switch {
		case waitedOut > 0 && o.Patience > 0 && time.Duration(s.HoldMS*float64(time.Millisecond)) >= o.Patience:
			line += "; the client waited out the whole hold: client/attempt-timeout"
		case waitedOut > 0:
			// The hold ended (and dropped the connection) before the client gave up: what
			// the client met was a closed connection, not its own timeout.
			line += "; the client waited out the whole hold, so its timeout path was not exercised: give it a per-attempt timeout below the hold, or a shorter client_patience"
		}
		lines = append(lines, line)
	}
	for _, k := range s.Kinds {
		if fired[k] {
			continue
		}
		dealt := false
		for _, as := range s.Assignments {
			dealt = dealt || as.Kind == k
		}
		why := fmt.Sprintf("dealt to no operation (%d operation(s) for %d kind(s))", len(s.Assignments), len(s.Kinds))
		switch {
		case dealt && k == "hold":
			why = "dealt, but no first attempt met it (one hold per run: an earlier operation may have had it)"
		case dealt:
			why = "dealt, but no first attempt of its operation met it"
		}
		lines = append(lines, fmt.Sprintf("%s: never applied: %s", k, why))
	}
	return lines
}

// scheduleResult is the INFO result of the applied schedule.
func scheduleResult(o Observation) verdict.Result {
	lines := ScheduleLines(o)
	cats := map[string]int{}
	for _, r := range o.Attempts {
		if r.Fault != "" {
			cats[r.Fault]++
		}
	}
	msg := fmt.Sprintf("%s (seed %d) over %d operation(s)", orNone(o.Schedule.Spec), o.Schedule.Seed, len(o.Schedule.Assignments))
	if len(lines) > 0 {
		msg += ": " + strings.Join(lines, "; ")
	}
	return verdict.Result{
		ScenarioID:  IDFaultSchedule,
		Description: "the faults applied, per operation",
		Requirement: "every fault kind asked for hits an operation",
		Source:      "client-check",
		Level:       verdict.LevelPolicy,
		Labels:      []string{"client", "faults", verdict.SummaryLabel},
		Target:      Target,
		Verdict:     verdict.Info,
		Message:     msg,
		Evidence:    verdict.Evidence{Categories: cats, Examples: lines},
	}
}
