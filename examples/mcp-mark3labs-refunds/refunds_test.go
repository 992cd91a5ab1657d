package main

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tests prove the defects are real, with the official SDK's client: each one is a
// behaviour idemproof's catalogue must catch (README.md).

func fastApp(cfg Config) *App {
	cfg.WorkMin, cfg.WorkMax = time.Millisecond, time.Millisecond
	return NewApp(cfg)
}

func TestSequentialRepeatReplays(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	first, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.False(t, first.IsError)
	again, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.Equal(t, encode(t, first), encode(t, again))
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"), "the happy path works")
}

func TestConcurrentRepeatsRefundTwice(t *testing.T) {
	// Both calls are let into the work only once both are in it: neither has stored a
	// result, so neither finds one.
	var arrived sync.WaitGroup
	arrived.Add(2)
	app := fastApp(Config{beforeWork: func() { arrived.Done(); arrived.Wait() }})
	base := start(t, app)
	cs := connect(t, base, nil)

	answers := make([]string, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := refund(t, cs, "k1", "o1", 4900)
			require.NoError(t, err)
			answers[i] = encode(t, res)
		}()
	}
	wg.Wait()
	require.Equal(t, 2, ledgerCount(t, base, cs, "o1"), "one key, two refunds")
	require.Equal(t, answers[0], answers[1], "both clients were told the same refund: only the ledger shows the duplicate")
}

func TestAnotherPayloadGetsTheOriginalsResult(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	first, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	other, err := refund(t, cs, "k1", "o1", 5000)
	require.NoError(t, err)
	require.False(t, other.IsError, "no mismatch refusal")
	require.Equal(t, encode(t, first), encode(t, other), "the 5000 request was answered with the 4900 refund")
	require.Equal(t, 1, ledgerCount(t, base, cs, "o1"))
}

func TestRefusedRequestIsPinnedToItsKey(t *testing.T) {
	base := start(t, fastApp(Config{}))
	cs := connect(t, base, nil)
	invalid, err := refund(t, cs, "k1", "o1", -5)
	require.NoError(t, err)
	require.True(t, invalid.IsError)
	corrected, err := refund(t, cs, "k1", "o1", 4900)
	require.NoError(t, err)
	require.Equal(t, encode(t, invalid), encode(t, corrected), "the corrected request gets the cached refusal")
	require.Zero(t, ledgerCount(t, base, cs, "o1"))
}

func TestRepeatWhileTheOriginalRunsExecutes(t *testing.T) {
	started, release := make(chan struct{}, 2), make(chan struct{})
	app := fastApp(Config{beforeWork: func() { started <- struct{}{}; <-release }})
	base := start(t, app)
	cs := connect(t, base, nil)

	done := make(chan error, 2)
	for range 2 {
		go func() { _, err := refund(t, cs, "k1", "o1", 4900); done <- err }()
	}
	<-started
	<-started // the repeat was not refused: it is in the work too
	close(release)
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	require.Equal(t, 2, ledgerCount(t, base, cs, "o1"))
}
