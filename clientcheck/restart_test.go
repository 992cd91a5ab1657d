package clientcheck_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// restarted is order-1 killed after its lost first attempt (key k1) at +50ms, then
// retried by the restarted client under retryKey.
func restarted(retryKey string) clientcheck.Observation {
	o := clientcheck.Observation{
		Attempts: []faultproxy.Record{
			lost(attempt(1, "k1", "b1", 0, 0)),
			attempt(2, retryKey, "b1", 201, 100*time.Millisecond),
		},
		Entities: map[string]string{"b1": "order-1"},
		Ledger:   map[string]int{"order-1": 1},
		Restarts: []clientcheck.Restart{{Operation: "order-1", Key: "k1", Attempt: 1, At: t0.Add(50 * time.Millisecond)}},
	}
	o.Schedule.Restart = true
	return o
}

func TestKeySurvivesRestartPassesOnlyWithTheOriginalKey(t *testing.T) {
	v := verdicts(restarted("k1"))[clientcheck.IDKeySurvives]
	require.Equal(t, verdict.Pass, v.Verdict, v.Message)
	require.Equal(t, "1 restarted operation(s) resumed under their original key", v.Message)

	o := restarted("k-after")
	o.Ledger["order-1"] = 2
	v = verdicts(o)[clientcheck.IDKeySurvives]
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Equal(t, map[string]int{"key-changed-across-restart": 1}, v.Evidence.Categories)
	require.Contains(t, v.Evidence.Examples[0], "order-1: killed after an attempt under k1, retried after the restart under k-after: 2 side effect(s)")
	require.NotNil(t, v.Evidence.Record, "the operation's timeline travels with the finding")

	// One cause, one finding: a key kept in memory only is client/key-survives-restart's,
	// with the duplicate under it; the key checks of one life say where it went.
	findings := clientcheck.Findings(clientcheck.Check(o), true)
	require.Len(t, findings, 1, "%v", findings)
	require.Equal(t, clientcheck.IDKeySurvives, findings[0].ScenarioID)
	v = verdicts(o)[clientcheck.IDKeyPerAttempt]
	require.Equal(t, verdict.NA, v.Verdict, v.Message)
	require.Contains(t, v.Message, "1 payload(s) got a fresh key only after a restart of the client: the key was kept, but not across the restart: client/key-survives-restart")
	require.Contains(t, verdicts(o)[clientcheck.IDOneEffect].Message, "under a key that changed across a restart of the client: client/key-survives-restart")
	require.Contains(t, verdicts(o)[clientcheck.IDSameKeyOnRetry].Message, "changed their key only across a restart of the client: client/key-survives-restart")
	o.Attempts = append(o.Attempts, attempt(3, "k-again", "b1", 201, 150*time.Millisecond))
	v = verdicts(o)[clientcheck.IDKeyPerAttempt]
	require.Contains(t, v.Message, "key minted per attempt", "a new key within one life of the client is minted per attempt")
}

func TestKeySurvivesRestartIsUnknownWhenTheOperationWasNeverResent(t *testing.T) {
	o := restarted("k1")
	o.Attempts = o.Attempts[:1]
	v := verdicts(o)[clientcheck.IDKeySurvives]
	require.Equal(t, verdict.Unknown, v.Verdict, "no retry after the restart: nothing proves the key survives")
}

func TestKeySurvivesRestartJudgesOnlyRunsWithRestarts(t *testing.T) {
	_, judged := verdicts(goodObservation())[clientcheck.IDKeySurvives]
	require.False(t, judged)
	o := goodObservation()
	o.Schedule.Restart = true
	v := verdicts(o)[clientcheck.IDKeySurvives]
	require.Equal(t, verdict.NA, v.Verdict, "restarts asked for, none happened")
}

func TestRestartKindParses(t *testing.T) {
	s, err := clientcheck.ParseSchedule("restart,503")
	require.NoError(t, err)
	require.Len(t, s.Kinds, 2)
	_, err = clientcheck.ParseSchedule("restart=2")
	require.ErrorContains(t, err, "takes no parameter")
}

// A restart is timed between the killed client's end and the restarted one's start, so
// that every attempt after it is the new life's: it was timed by the goroutine that asked
// for the kill, which a loaded machine could schedule after the new life had already
// sent its first attempt, and then a key kept per life looked changed within one life.
func TestARestartIsTimedBetweenTheTwoLives(t *testing.T) {
	srv := formServer(t)
	p, err := profile.Parse("form-api.yaml", []byte(fmt.Sprintf(formProfile, srv.URL, "/v1/refunds", "amount=4900&metadata[order_id]={{.Entity}}")))
	require.NoError(t, err)
	type life struct{ start, end time.Time }
	var (
		mu    sync.Mutex
		lives []life
	)
	client := func(ctx context.Context, env clientcheck.Env) error {
		mu.Lock()
		n := len(lives)
		lives = append(lives, life{start: time.Now()})
		mu.Unlock()
		defer func() {
			mu.Lock()
			lives[n].end = time.Now()
			mu.Unlock()
		}()
		// A key kept in memory: the same within one life, another in the next.
		return formClient(func(order string, _ int) string { return fmt.Sprintf("refund-%s-life-%d", order, n) })(ctx, env)
	}
	cfg := clientcheck.Config{Profile: p, Seed: 3, Timeout: time.Minute, Restart: true, FaultSpec: "reset"}
	res, err := clientcheck.Run(context.Background(), cfg, client)
	require.NoError(t, err)
	restarts := res.Observation.Restarts
	require.NotEmpty(t, restarts, "a lost answer restarts the client")
	require.Len(t, lives, len(restarts)+1, "one life more than restarts")
	for i, rs := range restarts {
		require.False(t, rs.At.Before(lives[i].end), "restart %d is timed after the killed life ended", i)
		require.True(t, rs.At.Before(lives[i+1].start), "restart %d is timed before the next life started", i)
	}
}
