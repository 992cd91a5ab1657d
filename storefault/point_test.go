package storefault_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/storefault"
)

// echoStore is a line-echo server standing in for a key store: every line it reads it
// writes back.
func echoStore(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func startPoint(t *testing.T) *storefault.Point {
	t.Helper()
	p, err := storefault.Start(storefault.Config{Listen: "127.0.0.1:0", Upstream: echoStore(t)})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// roundTrip writes a line and reads it back within a bound (the test's, not a speed
// claim: a healthy echo answers at once, a fault never does).
func roundTrip(c net.Conn, line string, within time.Duration) (string, error) {
	if err := c.SetDeadline(time.Now().Add(within)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func dial(t *testing.T, p *storefault.Point) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPointPassesBytesAndCountsThem(t *testing.T) {
	t.Parallel()
	p := startPoint(t)
	got, err := roundTrip(dial(t, p), "SET k v", 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "SET k v", got)
	require.Eventually(t, func() bool { s := p.Stats(); return s.FromStore == 8 }, 10*time.Second, 5*time.Millisecond)
	s := p.Stats()
	require.Equal(t, int64(1), s.Connections)
	require.Equal(t, int64(8), s.ToStore)
	require.Zero(t, s.Refused)
	require.True(t, s.Touched())
}

func TestDownCutsLiveConnectionsAndRefusesNewOnesUntilHealed(t *testing.T) {
	t.Parallel()
	p := startPoint(t)
	live := dial(t, p)
	_, err := roundTrip(live, "GET k", 10*time.Second)
	require.NoError(t, err)

	require.NoError(t, p.Set(storefault.Down, 0))
	require.Equal(t, storefault.Down, p.Fault())
	_, err = roundTrip(live, "GET k", 10*time.Second)
	requireClosed(t, err)

	fresh := dial(t, p) // accepted, then closed before any byte
	_, err = roundTrip(fresh, "GET k", 10*time.Second)
	requireClosed(t, err)
	// Toxiproxy starts a connection's two directions apart: the client may see the
	// refusal's close (the store-to-API side) before the API-to-store side has counted
	// the connection. The counts settle within moments.
	want := storefault.Stats{Connections: 2, Refused: 1, Cut: 1}
	require.Eventually(t, func() bool {
		s := p.Stats()
		return s.Connections == want.Connections && s.Refused == want.Refused && s.Cut == want.Cut
	}, 10*time.Second, 5*time.Millisecond, "want connections 2, refused 1, cut 1")

	require.NoError(t, p.Heal())
	got, err := roundTrip(dial(t, p), "GET k", 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "GET k", got)
}

func TestResetEndsEveryConnectionAtItsNextByte(t *testing.T) {
	t.Parallel()
	p := startPoint(t)
	live := dial(t, p)
	_, err := roundTrip(live, "a", 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, p.Set(storefault.Reset, 0))
	_, err = roundTrip(live, "b", 10*time.Second)
	requireClosed(t, err)
	_, err = roundTrip(dial(t, p), "c", 10*time.Second)
	requireClosed(t, err)
	require.NoError(t, p.Heal())
	got, err := roundTrip(dial(t, p), "d", 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "d", got)
}

func TestHangSwallowsBytesUntilTheCallerGivesUp(t *testing.T) {
	t.Parallel()
	p := startPoint(t)
	c := dial(t, p)
	require.NoError(t, p.Set(storefault.Hang, 0))
	_, err := roundTrip(c, "GET k", 300*time.Millisecond)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a hung store answers nothing: %v", err)
	require.NoError(t, p.Heal())
	got, err := roundTrip(dial(t, p), "GET k", 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "GET k", got)
}

func TestLatencyDelaysTheStoresAnswer(t *testing.T) {
	t.Parallel()
	p := startPoint(t)
	require.NoError(t, p.Set(storefault.Latency, 200*time.Millisecond))
	start := time.Now()
	got, err := roundTrip(dial(t, p), "GET k", 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "GET k", got)
	// A lower bound only: the answer cannot come sooner than the delay, however fast
	// the machine.
	require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	require.Error(t, p.Set(storefault.Latency, 0), "latency needs a delay")
}

func TestStartRefusesAnUnreachableUpstream(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	_, err = storefault.Start(storefault.Config{Listen: "127.0.0.1:0", Upstream: addr})
	require.ErrorContains(t, err, "the store at upstream "+addr+" does not accept connections")
	_, err = storefault.Start(storefault.Config{Listen: "nowhere", Upstream: addr})
	require.ErrorContains(t, err, "listen must be host:port")
}

func requireClosed(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection should have been closed, not left hanging: %v", err)
	}
}
