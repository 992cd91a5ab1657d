package scenarios

import (
	"errors"
	"fmt"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// openStdio puts the fault layer on the pipes of the profile's stdio server: the
// transport dials the layer, which starts the server; the layer's engine is the
// controller the scenarios add their rules to and read the journal from, exactly as
// they do the HTTP proxy's.
func (t *target) openStdio(seed int64) error {
	tr, ok := t.tr.(*mcpstdio.Transport)
	if !ok {
		return fmt.Errorf("open target %s: transport mcp-stdio without its transport", t.p.Name)
	}
	journalClass := t.p.Classifier()
	layer, err := stdio.New(stdio.Config{
		Command: t.p.StdioCommand(), KeyField: t.p.KeyField, Seed: seed,
		JournalBodyLimit: transport.MaxResponseBody,
		Classify: func(line []byte) string {
			body := tr.Comparable(line, "")
			if body == nil {
				return string(outcome.Info)
			}
			return string(journalClass.Classify(outcome.Answer{Status: 200, Body: body}))
		},
	})
	if err != nil {
		return fmt.Errorf("open target %s: %w", t.p.Name, err)
	}
	tr.Dial = func() (mcpstdio.Conn, error) { return layer.Connect() }
	t.proxyURL, t.ctl, t.checkFault = "stdio:", layer.Engine(), stdio.CheckFault
	t.closeFn = func() error {
		tr.Close()
		return layer.Close()
	}
	if err := t.openSink(); err != nil {
		return errors.Join(err, t.closeFn())
	}
	return nil
}

// inexpressibleFault says why the target's fault layer cannot apply one of the
// scenario's faults ("" when it can apply them all): over stdio, a 503 has no line to be.
func (t *target) inexpressibleFault(sc Scenario) string {
	if t.checkFault == nil {
		return ""
	}
	for _, fo := range sc.Faults {
		spec := fo.Fault
		if fo.DurationOf != "" {
			spec.Duration = t.resolve(fo.DurationOf)
		}
		err := t.checkFault(spec)
		if err == nil {
			continue
		}
		var fe *faultproxy.FieldError
		why := err.Error()
		if errors.As(err, &fe) {
			why = fe.Msg
		}
		what := fo.Fault.Type
		if fo.Fault.Status != 0 {
			what += fmt.Sprintf(" %d", fo.Fault.Status)
		}
		return fmt.Sprintf("needs the fault %s, which the pipes of a stdio server cannot carry: %s", what, why)
	}
	return ""
}
