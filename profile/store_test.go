package profile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

func TestStoreIsParsedWithItsTimeoutAndDurableKeys(t *testing.T) {
	t.Parallel()
	p, err := profile.Parse("x.yaml", []byte(minimalProfile+`  durable_keys: true
store: {listen: "127.0.0.1:6380", upstream: "127.0.0.1:6379", timeout: 800ms}
`))
	require.NoError(t, err)
	require.Equal(t, &profile.Store{Listen: "127.0.0.1:6380", Upstream: "127.0.0.1:6379", Timeout: profile.Duration(800 * time.Millisecond)}, p.Store)
	require.True(t, p.Expect.DurableKeys)
	require.Empty(t, p.Missing(profile.CapStore))
	require.Equal(t, 1300*time.Millisecond, p.Store.HangFor(profile.Duration(2*time.Second)).Std(), "past the API's own store timeout")
	p.Store.Timeout = 0
	require.Equal(t, 2500*time.Millisecond, p.Store.HangFor(profile.Duration(2*time.Second)).Std(), "past the client's timeout without one")
}

func TestWithoutStoreTheStoreScenariosAreNotApplicable(t *testing.T) {
	t.Parallel()
	p, err := profile.Parse("x.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	require.Contains(t, p.Missing(profile.CapStore), "store not declared")
}

func TestStoreErrorsNameTheFieldToFix(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`store: {listen: "6380", upstream: "127.0.0.1:6379"}`:                         "store.listen: must be host:port",
		`store: {listen: "127.0.0.1:0", upstream: "127.0.0.1:6379"}`:                  "store.listen: 127.0.0.1:0 picks a free port the API cannot know",
		`store: {listen: "127.0.0.1:6380"}`:                                           "store.upstream: must be host:port",
		`store: {listen: "127.0.0.1:6380", upstream: "127.0.0.1:6380"}`:               "store.upstream: is the same address as store.listen",
		`store: {listen: "127.0.0.1:6380", upstream: "127.0.0.1:6379", timeout: -1s}`: "store.timeout: must not be negative",
	} {
		_, err := profile.Parse("x.yaml", []byte(minimalProfile+doc+"\n"))
		require.ErrorContains(t, err, want, doc)
	}
}
