package refunds

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fastApp(cfg Config) *App {
	cfg.WorkMin, cfg.WorkMax = time.Millisecond, time.Millisecond
	return NewApp(cfg)
}

func TestConcurrentRepeatsRefundOnce(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	app := fastApp(Config{beforeWork: func() { started <- struct{}{}; <-release }})
	base := start(t, app)
	cs := connect(t, base, nil)

	type answer struct {
		json string
		err  error
	}
	original := make(chan answer, 1)
	go func() {
		res, err := refund(t, cs, "k1", "o1", 4900)
		original <- answer{encode(t, res), err}
	}()
	<-started // the original holds the key and is working

	const repeats = 20
	var wg sync.WaitGroup
	codes := make(chan int64, repeats)
	for range repeats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := refund(t, cs, "k1", "o1", 4900)
			codes <- rpcCode(err)
		}()
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		require.EqualValues(t, CodeInFlight, code, "a repeat while the original runs is refused as in flight")
	}
	close(release)

	first := <-original
	require.NoError(t, first.err)
	require.Contains(t, first.json, `"status":"succeeded"`)
	again, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.Equal(t, first.json, encode(t, again), "the repeat replays the stored result")
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}

func TestBurstOfRepeatsExecutesOnce(t *testing.T) {
	app := NewApp(Config{WorkMin: 50 * time.Millisecond, WorkMax: 50 * time.Millisecond})
	base := start(t, app)
	cs := connect(t, base, nil)
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := refund(t, cs, "k1", "o1", 4900)
			if err != nil {
				require.EqualValues(t, CodeInFlight, rpcCode(err), "%v", err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}

func TestMismatchIsRefusedAndTheOriginalStillReplays(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	first, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)

	_, err = refund(t, cs, "k1", "o1", 5000)
	require.EqualValues(t, CodeMismatch, rpcCode(err), "%v", err)
	_, err = refund(t, cs, "k1", "o1", 5000)
	require.EqualValues(t, CodeMismatch, rpcCode(err), "the uncorrected request fails again")

	again, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.Equal(t, encode(t, first), encode(t, again))
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}

func TestSameArgumentsSpelledOtherwiseAreTheSameRequest(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	first, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	// The SDK's client sends a map: its keys in another order, 4900 spelled as a float.
	again, err := refund(t, cs, "k1", "o1", 4900.0)
	require.NoError(t, err)
	require.Equal(t, encode(t, first), encode(t, again))
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}

func TestKeyExpiresAfterRetention(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	base := start(t, fastApp(Config{Retention: 3 * time.Second, Now: clock}))
	cs := connect(t, base, nil)

	first, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	advance(2900 * time.Millisecond)
	inside, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.Equal(t, encode(t, first), encode(t, inside), "inside the window: a replay")
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))

	advance(200 * time.Millisecond)
	after, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.NotEqual(t, encode(t, first), encode(t, after), "after the window: executed anew")
	require.Equal(t, 2, ledgerCount(t, base, cs, "o1"))
}

func TestKeyIsRequiredAndChecked(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	for name, tc := range map[string]struct {
		key  any
		code int64
	}{
		"missing":       {nil, CodeMissingKey},
		"empty":         {"", CodeInvalidKey},
		"over-length":   {strings.Repeat("k", 256), CodeInvalidKey},
		"control-chars": {"a\tb", CodeInvalidKey},
		"not a string":  {42, CodeInvalidKey},
	} {
		_, err := refund(t, cs, tc.key, "o-"+name, 4900)
		require.EqualValues(t, tc.code, rpcCode(err), "%s: %v", name, err)
		require.Zero(t, ledgerCount(t, base, cs, "o-"+name), name)
	}
	_, err := refund(t, cs, strings.Repeat("k", 255), "o-max", 4900)
	require.NoError(t, err, "a 255-character key is accepted")
}

func TestValidationErrorIsNotStored(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	_, err := refund(t, cs, "k1", "o1", -5)
	require.EqualValues(t, -32602, rpcCode(err), "%v", err)
	_, err = refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err, "the corrected request with the same key executes")
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}

func TestDeclinedRefundIsStoredAndReplayed(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	first, err := refund(t, cs, "k1", "o1", 2_000_000)
	require.NoError(t, err)
	require.True(t, first.IsError)
	require.Contains(t, encode(t, first), "refund declined")
	again, err := refund(t, cs, "k1", "o1", 2_000_000)
	require.NoError(t, err)
	require.Equal(t, encode(t, first), encode(t, again))
	require.Zero(t, ledgerCount(t, base, cs, "o1"))
}

func TestInjectedFailureIsNotStored(t *testing.T) {
	base := start(t, fastApp(Config{}))
	failing := connect(t, base, http.Header{"X-Test-Fail": {"503"}})
	_, err := refund(t, failing, "k1", "o1", 4900)
	require.EqualValues(t, -32603, rpcCode(err), "%v", err)

	cs := connect(t, base, nil)
	_, err = refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err, "the retry executes")
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}
