package idempotency

import (
	"encoding/json"
	"strings"
)

// Flaws switches on known-bad variants of the rules. The zero value is the correct
// middleware. Each field models a bug real libraries shipped; the reference package
// keeps the catalogue of names, descriptions and the scenario that catches each.
type Flaws struct {
	CheckThenSet      bool // the key is recorded after the work: concurrent first attempts both execute
	NoFingerprint     bool // the payload is not compared: another payload gets the stored response
	FingerprintInKey  bool // the fingerprint is folded into the key: another payload executes again
	FabricateInFlight bool // a repeat during the original answers 200 with a made-up body
	Pin5xx            bool // a 5xx is stored and replayed instead of released
	WedgeOnCrash      bool // a lock never goes stale: a crashed request wedges its key
	NoFencing         bool // a stale original still commits after another attempt took over
	GlobalScope       bool // keys are shared across principals
	// EndpointBlind: keys are shared across endpoints, and the fingerprint covers what
	// the endpoints' bodies have in common (order and amount): the same key on another
	// endpoint is replayed the first endpoint's response.
	EndpointBlind      bool
	NeverExpire        bool // the retention window is ignored
	EarlyExpiry        bool // keys expire after a tenth of the declared window
	ReplayRegenerates  bool // a replay re-renders the body with a fresh id and timestamp
	NoReplayHeader     bool // replays carry no Idempotent-Replayed marker
	MismatchOverwrites bool // the 422 path stores the new fingerprint: the changed request passes next time
	KeyCaseFold        bool // keys are compared case-insensitively: Ab_9 and aB_9 are one key
	KeyTruncate64      bool // only a key's first 64 characters are kept: long keys sharing them are one key
	// FingerprintAmountOnly: the fingerprint covers the amount alone (the one member its
	// developer thought mattered): a reuse with another reason is replayed.
	FingerprintAmountOnly bool
	// EntityBlind: the fingerprint leaves the order id out (it hashes what is refunded,
	// not of what): the key reused for another order is replayed the first order's
	// response, and the second order is never refunded.
	EntityBlind bool
	// FailOpenOnStoreError: when the key store fails to record a key, the request runs
	// anyway, unkeyed, its effects committed by the application's own connection
	// (Config.UnkeyedStore): a retry that arrives while the store is out executes again.
	FailOpenOnStoreError bool
	// StoreTimeoutAsMiss: a key lookup that runs past Config.StoreTimeout is taken for
	// "no such key" (a cache client's timeout read as a miss), and the request runs
	// unkeyed: two copies that meet a hung store both execute. Other store errors are
	// refused as they should be.
	StoreTimeoutAsMiss bool
}

// orderAndAmount is the body EndpointBlind fingerprints: its order_id and amount members
// alone (the whole body when it is not a JSON object).
func orderAndAmount(body []byte) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	out, err := json.Marshal(map[string]json.RawMessage{"order_id": doc["order_id"], "amount": doc["amount"]})
	if err != nil {
		return body
	}
	return out
}

// withoutOrder is the body EntityBlind fingerprints: without its order_id member (the
// whole body when it is not a JSON object).
func withoutOrder(body []byte) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	delete(doc, "order_id")
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// amountOnly is the body FingerprintAmountOnly fingerprints: its amount member alone
// (the whole body when it has none, or is not a JSON object).
func amountOnly(body []byte) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc["amount"] == nil {
		return body
	}
	return append(append([]byte(`{"amount":`), doc["amount"]...), '}')
}

// truncatedKeyLength is where KeyTruncate64 cuts a key: a VARCHAR(64) column behind an
// API that accepts MaxKeyLength.
const truncatedKeyLength = 64

// storedKey is the key as a flawed store keeps it: folded to lower case (a
// case-insensitive collation on the key column), cut to its first 64 characters (a
// VARCHAR(64) column that truncates, or a prefix index). The correct store keeps it as
// sent.
func (f Flaws) storedKey(key string) string {
	if f.KeyCaseFold {
		key = strings.ToLower(key)
	}
	if f.KeyTruncate64 && len(key) > truncatedKeyLength {
		key = key[:truncatedKeyLength]
	}
	return key
}
