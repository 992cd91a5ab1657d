package reference

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Flaw is a switchable known-bad variant of the server, modelled on a real-world bug,
// and the scenario ID (docs/scenario-ids.md) that must catch it.
type Flaw struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	CaughtBy    string `json:"caught_by"`
	apply       func(*idempotency.Flaws)
}

// Flaws returns the flaw catalogue in a stable order.
func Flaws() []Flaw {
	return append(append(middlewareFlaws(), wrapperFlaws()...), vendorFlaws()...)
}

// middlewareFlaws are the flaws switched inside the middleware (idempotency.Flaws).
func middlewareFlaws() []Flaw {
	return []Flaw{
		{"check-then-set", "key recorded after the work: two concurrent first attempts both find nothing and both execute", "race/concurrent-pair",
			func(f *idempotency.Flaws) { f.CheckThenSet = true }},
		{"no-fingerprint", "the payload is never compared: a different payload is replayed the first response", "fingerprint/mismatch",
			func(f *idempotency.Flaws) { f.NoFingerprint = true }},
		{"fingerprint-in-key", "the fingerprint is folded into the key: a different payload executes again", "fingerprint/mismatch",
			func(f *idempotency.Flaws) { f.FingerprintInKey = true }},
		{"fabricate-in-flight", "answers 200 while the original still runs instead of 409", "race/in-flight-not-fabricated",
			func(f *idempotency.Flaws) { f.FabricateInFlight = true }},
		{"pin-5xx", "stores and replays a 5xx: a transient failure is pinned to the key for the whole window", "storage/5xx-not-pinned",
			func(f *idempotency.Flaws) { f.Pin5xx = true }},
		{"wedge-on-crash", "no stale-lock takeover: a request that crashed after the key insert wedges the key at 409", "recovery/crash-after-key",
			func(f *idempotency.Flaws) { f.WedgeOnCrash = true }},
		{"no-fencing", "no fencing token: a stale original that was only slow commits after a takeover committed too", "recovery/slow-past-lock",
			func(f *idempotency.Flaws) { f.NoFencing = true }},
		{"global-scope", "keys shared across principals: another user's request with the same key gets the first user's response", "scope/other-principal",
			func(f *idempotency.Flaws) { f.GlobalScope = true }},
		{"endpoint-blind", "keys shared across endpoints: the same key on another endpoint replays the first endpoint's response", "scope/other-endpoint",
			func(f *idempotency.Flaws) { f.EndpointBlind = true }},
		{"never-expire", "keys never expire: a repeat after the declared window is still replayed", "expiry/after-window",
			func(f *idempotency.Flaws) { f.NeverExpire = true }},
		{"early-expiry", "keys expire after a tenth of the declared window: a repeat inside it executes again", "expiry/inside-window",
			func(f *idempotency.Flaws) { f.EarlyExpiry = true }},
		{"replay-regenerates", "a replay re-renders the body from the stored outcome: fresh id and timestamp, other key order", "replay/fidelity-body",
			func(f *idempotency.Flaws) { f.ReplayRegenerates = true }},
		{"no-replay-header", "replays carry no Idempotent-Replayed marker", "replay/marker",
			func(f *idempotency.Flaws) { f.NoReplayHeader = true }},
		{"mismatch-overwrites", "the 422 path replaces the stored fingerprint, so the changed request goes through on its next try", "fingerprint/mismatch-repeat",
			func(f *idempotency.Flaws) { f.MismatchOverwrites = true }},
		{"key-casefold", "keys are compared case-insensitively (a case-insensitive collation on the key column): a second key that differs only in letter case is replayed the first key's response", "key/case-distinct",
			func(f *idempotency.Flaws) { f.KeyCaseFold = true }},
		{"key-truncate-64", "only a key's first 64 characters are kept (a VARCHAR(64) column) while keys up to 255 are accepted: a second long key with the same first 64 characters is replayed the first key's response", "key/long-prefix-distinct",
			func(f *idempotency.Flaws) { f.KeyTruncate64 = true }},
		{"fingerprint-amount-only", "the fingerprint covers the amount alone: the key reused with another reason is replayed the original's response", "fingerprint/each-member",
			func(f *idempotency.Flaws) { f.FingerprintAmountOnly = true }},
		{"fail-open-on-store-error", "when the key store fails, the request runs anyway, unkeyed (its effects committed by the application's own connection): a retry that arrives while the store is down executes a second time", "store/down-on-retry",
			func(f *idempotency.Flaws) { f.FailOpenOnStoreError = true }},
		{"store-timeout-as-miss", "a key lookup that runs past the store timeout is read as \"no such key\" and the request runs unkeyed: two copies that meet a hung store both execute", "store/hang-race",
			func(f *idempotency.Flaws) { f.StoreTimeoutAsMiss = true }},
		{"entity-blind", "the fingerprint leaves the order id out: the key reused for another order is replayed the first order's refund, and the second order is never refunded", "scope/other-entity",
			func(f *idempotency.Flaws) { f.EntityBlind = true }},
	}
}

// FlawNames lists the valid flaw names.
func FlawNames() []string {
	var names []string
	for _, f := range Flaws() {
		names = append(names, f.Name)
	}
	return names
}

// parseFlaws turns names into switches; an unknown name is an error listing the valid ones.
func parseFlaws(names []string) (idempotency.Flaws, error) {
	var out idempotency.Flaws
	byName := map[string]Flaw{}
	for _, f := range Flaws() {
		byName[f.Name] = f
	}
	for _, n := range names {
		f, ok := byName[strings.TrimSpace(n)]
		if !ok {
			return out, fmt.Errorf("unknown flaw %q: valid flaws are %s", n, strings.Join(FlawNames(), ", "))
		}
		f.apply(&out)
	}
	return out, nil
}
