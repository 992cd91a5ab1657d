// Package conformance is the Ginkgo conformance suite: the whole scenario catalogue
// against one target, one spec per scenario, labelled with the catalogue's labels.
//
// The target is the profile given by -profile or $IDEMPROOF_PROFILE (a YAML file or a
// built-in profile name). Without one, the suite runs the catalogue twice: against the
// embedded reference server on the memory store and on PostgreSQL (a container from
// the locally built image; skipped locally when Docker is missing, failed under CI=true).
//
// A spec passes on PASS, INFO and N/A, and on NON-STRICT unless $IDEMPROOF_STRICT=true;
// FAIL and UNKNOWN always fail it, with the aligned attempt timeline in the message.
//
//	go test ./suites/conformance/ -args -profile my-api.yaml
//	go run github.com/onsi/ginkgo/v2/ginkgo --label-filter='group:replay' ./suites/conformance
package conformance
