package scenarios

// WithPremise is withPremise, for the external tests.
var WithPremise = withPremise

// LateReads is lateReads, for the external tests.
var LateReads = lateReads
