package scenarios

import "github.com/idemproof/idemproof/outcome"

// Classifier returns how the profile's answers are classified: by the statuses it
// declares (expect, business_error, validation_error).
func (p *Profile) Classifier() outcome.Classifier {
	s := outcome.Statuses{InFlight: p.Expect.InFlight, Mismatch: p.Expect.Mismatch}
	if p.Expect.MissingKey != "" && p.Expect.MissingKey != "optional" {
		s.MissingKey = atoiOr0(p.Expect.MissingKey)
	}
	if p.Business != nil {
		s.Business = p.Business.Status
	}
	if p.Validation != nil {
		s.Validation = p.Validation.Status
	}
	return s
}

func atoiOr0(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
