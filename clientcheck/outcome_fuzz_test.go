package clientcheck_test

import (
	"bytes"
	"testing"

	"github.com/idemproof/idemproof/clientcheck"
)

// FuzzParseOutcomes: any outcome file either parses into outcomes that each name an
// operation and a known outcome, or is refused with an error; never a panic.
func FuzzParseOutcomes(f *testing.F) {
	f.Add([]byte("{\"operation\":\"order-1\",\"outcome\":\"ok\",\"key\":\"k\",\"status\":201}\n\n{\"operation\":\"order-2\",\"outcome\":\"unknown\"}\n"))
	f.Add([]byte(`{"operation":"o","outcome":"failed","note":"422"}` + "\n" + `{"operation":"","outcome":"ok"}`))
	f.Add([]byte(`{"operation":"o","outcome":"ok"}]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		outs, err := clientcheck.ParseOutcomes(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, o := range outs {
			switch {
			case o.Operation == "":
				t.Fatalf("accepted an outcome without operation: %+v", o)
			case o.Outcome != clientcheck.OutcomeOK && o.Outcome != clientcheck.OutcomeFailed && o.Outcome != clientcheck.OutcomeUnknown:
				t.Fatalf("accepted outcome %q", o.Outcome)
			}
		}
	})
}
