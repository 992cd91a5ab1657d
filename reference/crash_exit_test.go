package reference_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference"
	"github.com/stretchr/testify/require"
)

// envCrashChild makes the test binary act as a server process with WithCrashExits.
const envCrashChild = "IDEMPROOF_REFERENCE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envCrashChild) == "1" {
		runCrashChild()
		return
	}
	os.Exit(m.Run())
}

// runCrashChild serves until a crash hook exits the process; it prints its address first.
func runCrashChild() {
	srv, err := reference.New(reference.WithTestHooks(true), reference.WithCrashExits(true))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(ln.Addr())
	// Bounded: a child that is never crashed gives up instead of lingering.
	time.AfterFunc(time.Minute, func() { os.Exit(4) })
	http.Serve(ln, srv)
}

func TestCrashExitsTheProcess(t *testing.T) {
	for _, point := range []string{"after-key", "after-commit"} {
		t.Run(point, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envCrashChild+"=1")
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			addr, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)

			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
			req, err := http.NewRequest(http.MethodPost, "http://"+strings.TrimSpace(addr)+"/v1/refunds",
				strings.NewReader(`{"order_id":"o1","amount":4900}`))
			require.NoError(t, err)
			req.Header.Set("Idempotency-Key", "k1")
			req.Header.Set(reference.HeaderTestCrash, point)
			_, err = client.Do(req)
			require.Error(t, err, "a crashed process sends no response")

			err = cmd.Wait()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "wait: %v", err)
			require.Equal(t, reference.CrashExitCode, exit.ExitCode())
		})
	}
}
