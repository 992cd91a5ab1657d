package main

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/storm"
	"github.com/idemproof/idemproof/verdict"
)

// startRedis starts Debian's redis-server on a free port, without persistence, for the
// test alone. Without it the test skips, or fails under CI=true (ci/test installs it).
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal("redis-server not found, and CI=true: ci/test installs it (apt-get install redis-server)")
		}
		t.Skip("redis-server not found: apt-get install redis-server (ci/test installs it)")
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// Ready when it answers PING; bounded, and polled rather than slept for.
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	require.Eventually(t, func() bool { return rdb.Ping(context.Background()).Err() == nil }, 30*time.Second, 20*time.Millisecond, "redis-server on %s answers PING", addr)
	return addr
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// storeVerdicts starts the API with its Redis address at the profile's store.listen and
// runs the store/* scenarios through the store fault point.
func storeVerdicts(t *testing.T, redisAddr string, failClosed bool) map[string]verdict.Result {
	t.Helper()
	listen := freeAddr(t)
	srv := httptest.NewServer(newServer(listen, time.Hour, failClosed).routes())
	t.Cleanup(srv.Close)
	t.Setenv("REDIS_REFUNDS_URL", srv.URL)
	t.Setenv("REDIS_REFUNDS_STORE", listen)
	t.Setenv("REDIS_ADDR", redisAddr)
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{prof}, Only: []string{"store/*"}, Seed: 1})
	require.NoError(t, err)
	got := map[string]verdict.Result{}
	for _, r := range rep.Results {
		got[r.ScenarioID] = r
	}
	require.Len(t, got, 4)
	return got
}

// TestAMiddlewareThatFailsOpenOnRedisIsCaught: the store scenarios catch the fail-open
// middleware on real Redis with real connection cuts, and pass the same API failing
// closed. (Not parallel: t.Setenv.)
func TestAMiddlewareThatFailsOpenOnRedisIsCaught(t *testing.T) {
	redisAddr := startRedis(t)
	for id, r := range storeVerdicts(t, redisAddr, false) {
		fmt.Printf("fail open:   %s %s: %s\n", r.Verdict, id, r.Message)
		require.Equal(t, verdict.Fail, r.Verdict, "%s: %s", id, r.Message)
		require.Contains(t, r.Message, "fail-open", id)
	}
	for id, r := range storeVerdicts(t, redisAddr, true) {
		fmt.Printf("fail closed: %s %s: %s\n", r.Verdict, id, r.Message)
		require.Equal(t, verdict.Pass, r.Verdict, "%s: %s", id, r.Message)
	}
}

// TestTheStormsStoreOutagesCatchItToo: the storm's store outages (down, reset, hang,
// one at a time, each around one operation's first attempt) find the fail-open
// middleware's duplicates, and nothing against the same API failing closed.
func TestTheStormsStoreOutagesCatchItToo(t *testing.T) {
	redisAddr := startRedis(t)
	run := func(failClosed bool, schedule string, ops int) *storm.Report {
		listen := freeAddr(t)
		api := newServer(listen, time.Hour, failClosed)
		srv := httptest.NewServer(api.routes())
		t.Cleanup(srv.Close)
		t.Setenv("REDIS_REFUNDS_URL", srv.URL)
		t.Setenv("REDIS_REFUNDS_STORE", listen)
		t.Setenv("REDIS_ADDR", redisAddr)
		prof, err := profile.Load("profile.yaml")
		require.NoError(t, err)
		cfg := storm.Config{Profile: prof, Ops: ops, Seed: 2, NoShrink: true}
		if schedule != "" {
			s, err := storm.ParseSchedule(schedule)
			require.NoError(t, err)
			cfg.Schedule = &s
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		rep, err := storm.Run(ctx, cfg)
		require.NoError(t, err)
		return rep
	}
	for _, outage := range []string{"outage=down", "outage=reset"} {
		rep := run(false, outage, 4)
		require.Positive(t, rep.Counts[storm.CatDuplicated], "%s against the fail-open middleware: %v", outage, rep.Counts)
	}
	rep := run(true, "", 300)
	require.True(t, rep.Safe(), "%v %v", rep.Counts, rep.Findings)
	require.Zero(t, rep.Counts[storm.CatFailed], "%+v", rep.Findings[storm.CatFailed])
}
