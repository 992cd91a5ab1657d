package stdio_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// The test binary is also the servers the tests start: with IDEMPROOF_STDIO_TEST_SERVER
// set it serves instead of testing.
func TestMain(m *testing.M) {
	switch os.Getenv("IDEMPROOF_STDIO_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "counter":
		counterServer()
	}
	os.Exit(0)
}

// counterServer answers every request with how many requests it has seen so far
// ({"result":{"n":N,"method":M}}), after params.delay_ms; it writes "ready" to stderr.
func counterServer() {
	fmt.Fprintln(os.Stderr, "counter server ready")
	var n atomic.Int64
	out := make(chan []byte, 64)
	go func() {
		w := bufio.NewWriter(os.Stdout)
		for b := range out {
			w.Write(append(b, '\n'))
			w.Flush()
		}
	}()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				DelayMS int `json:"delay_ms"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		count := n.Add(1)
		go func() {
			time.Sleep(time.Duration(req.Params.DelayMS) * time.Millisecond)
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"n": count, "method": req.Method}})
			out <- b
		}()
	}
}

func testServer(kind string) []string {
	return []string{"IDEMPROOF_STDIO_TEST_SERVER=" + kind}
}

func request(id any, method string, params string) []byte {
	idj, _ := json.Marshal(id)
	if params == "" {
		params = "{}"
	}
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idj, method, params))
}

func lines(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	for range n {
		s, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read line %d: %v (got %q)", len(out)+1, err, out)
		}
		out = append(out, strings.TrimSuffix(s, "\n"))
	}
	return out
}

// liveInGroup lists the processes of process group pgid that are not zombies (a zombie
// is dead; whoever reaps orphans, the container's init may not).
func liveInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to count processes in")
	}
	var live []string
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so read after the last ')'.
		s := string(b)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) < 3 || rest[0] == "Z" || rest[2] != fmt.Sprint(pgid) {
			continue
		}
		live = append(live, s)
	}
	return live
}

func byMethod(recs []faultproxy.Record, method string) *faultproxy.Record {
	for i := range recs {
		if recs[i].RPCMethod == method {
			return &recs[i]
		}
	}
	return nil
}

func byAttempt(recs []faultproxy.Record, n int) *faultproxy.Record {
	for i := range recs {
		if recs[i].Attempt == n {
			return &recs[i]
		}
	}
	return nil
}
