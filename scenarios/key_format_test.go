package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// uuidGated are the scenarios whose premise is a key no UUID can be: N/A under
// expect.key_format: uuid.
var uuidGated = []string{
	"key/max-length", "key/over-length", "key/control-chars", "key/sf-string",
	"key/empty-quoted", "key/valid-never-5xx", "key/case-distinct", "key/long-prefix-distinct",
}

func TestKeyFormatValidated(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"free-form", "uuid"} {
		p := fakeProfile(t, "http://127.0.0.1:1")
		p.Expect.KeyFormat = v
		require.NoError(t, p.Validate(), v)
	}
	p := fakeProfile(t, "http://127.0.0.1:1")
	p.Expect.KeyFormat = "UUID"
	err := p.Validate()
	require.ErrorContains(t, err, "expect.key_format")
	require.ErrorContains(t, err, `must be free-form (the default: keys of any shape) or uuid`)
	require.ErrorContains(t, err, `got "UUID"`)
}

// Against a target that refuses every key but a lower-case UUID, key_format: uuid makes
// every key the runner sends one, and no two scenarios share a key; the scenarios whose
// premise is another key are N/A naming key_format, the others are judged.
func TestKeyFormatUUIDSendsOnlyUUIDs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	f := &fakeRefunds{uuidOnly: true}
	p := fakeProfile(t, startFake(t, f))
	p.ClientTimeout = profile.Duration(10 * time.Second)
	p.Expect.KeyFormat = profile.KeyFormatUUID
	require.NoError(t, scenarios.Preflight(ctx, p), "the preflight sends a UUID too")
	// The quick set, less the two scenarios that hold an attempt past the 10 s client
	// timeout (a minute of this test, and nothing about keys the others do not send).
	var only []string
	list, err := scenarios.Select(append([]string{"race/keepalive-many-keys"}, quickSet...), nil)
	require.NoError(t, err)
	for _, sc := range list {
		if sc.ID != "recovery/client-gave-up" && sc.ID != "replay/after-hold" {
			only = append(only, sc.ID)
		}
	}
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 7})
	require.NoError(t, err)
	v := verdicts(rep)
	for _, id := range uuidGated {
		require.Equal(t, verdict.NA, v[id], id)
		require.Contains(t, result(t, rep, id).Message, "expect.key_format: uuid", id)
	}
	for _, r := range rep.Results {
		require.NotContains(t, []verdict.Verdict{verdict.Fail, verdict.Unknown}, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
	}
	for _, id := range []string{"key/missing", "key/empty", "key/distinct-keys-same-body", "replay/after-503", "fingerprint/mismatch", "race/keepalive-many-keys"} {
		require.Equal(t, verdict.Pass, v[id], "%s: %s", id, result(t, rep, id).Message)
	}

	owner := map[string]string{} // key -> the scenario that sent it
	for _, r := range rep.Results {
		if r.Evidence.Record == nil {
			continue
		}
		for _, op := range r.Evidence.Record.History {
			if op.Type != verdict.OpInvoke || op.Key == "" {
				continue
			}
			require.Regexp(t, lowerUUID, op.Key, "%s step %s", r.ScenarioID, op.Step)
			if o, ok := owner[op.Key]; ok {
				require.Equal(t, o, r.ScenarioID, "key %s sent by two scenarios", op.Key)
			}
			owner[op.Key] = r.ScenarioID
		}
	}
	require.NotEmpty(t, owner)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.seen {
		if k := s.Header.Get("Idempotency-Key"); k != "" {
			require.Regexp(t, lowerUUID, k, "the target saw %s %s", s.URI, k)
		}
	}
}

// The three key capabilities are the free-form default's: the reference's profile has
// them all, and key_format uuid lacks each, naming the field.
func TestKeyCapabilitiesFollowKeyFormat(t *testing.T) {
	t.Parallel()
	caps := []profile.Capability{profile.CapFreeFormKeys, profile.CapKeyLengthLimit, profile.CapCaseSensitiveKeys}
	ref := refProfile(t)
	for _, c := range caps {
		require.Empty(t, ref.Missing(c), c)
	}
	ref.Expect.KeyFormat = profile.KeyFormatUUID
	for _, c := range caps {
		require.Contains(t, ref.Missing(c), "the profile declares expect.key_format: uuid", c)
	}
	require.Contains(t, ref.Missing(profile.CapCaseSensitiveKeys), "RFC 9562")
}
