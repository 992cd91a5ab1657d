package main_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The vendor command records a target's calls and answers its admin API on a listener
// of its own; both addresses are printed, so port 0 works.
func TestVendorRecordsCallsAndServesThemOnItsAdminAPI(t *testing.T) {
	cmd := exec.Command(checkBinary(t), "vendor", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	m := regexp.MustCompile(`calls on (http://\S+), admin on (http://\S+)`).FindStringSubmatch(line)
	require.Len(t, m, 3, "the startup line names both addresses: %q", line)
	vendor, admin := m[1], strings.TrimSpace(m[2])

	req, err := http.NewRequest(http.MethodPost, vendor+"/v1/notifications", strings.NewReader(`{"order_id":"o1"}`))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", "k1")
	for _, want := range []int{201, 200} {
		resp, err := http.DefaultClient.Do(req.Clone(req.Context()))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "first the effect, then a keyed repeat")
		req.Body, _ = req.GetBody()
	}
	resp, err := http.Get(admin + "/calls?entity=o1")
	require.NoError(t, err)
	defer resp.Body.Close()
	var got struct {
		Ledger struct {
			Calls, Effects int
		} `json:"ledger"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, 2, got.Ledger.Calls)
	require.Equal(t, 1, got.Ledger.Effects)
}
