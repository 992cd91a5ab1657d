package scenarios

// WithPremise is withPremise, for the external tests.
var WithPremise = withPremise
