package report

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/verdict"
)

// writeStoreTimeline lists the store fault point's switches of a store scenario (profile
// store:), each with what the point saw until the next: "down before retry: 1 refused,
// 2 cut; up before after".
func writeStoreTimeline(b *strings.Builder, rec *verdict.Record) {
	if len(rec.Store) == 0 {
		return
	}
	parts := make([]string, len(rec.Store))
	for i, ev := range rec.Store {
		where := "at the end"
		if ev.Step != "" {
			where = "before " + ev.Step
		}
		part := ev.Fault + " " + where
		if i+1 < len(rec.Store) {
			d := rec.Store[i+1].Stats.Sub(ev.Stats)
			part += fmt.Sprintf(" (then %d connection(s), %d refused, %d cut, %d byte(s) to the store)", d.Connections, d.Refused, d.Cut, d.ToStore)
		}
		parts[i] = part
	}
	fmt.Fprintf(b, "  store: %s\n", strings.Join(parts, "; "))
}
