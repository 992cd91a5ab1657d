// Package servemem is the full-size check of the reference server's memory bound (`ci/bench
// serve-memory`, docs/reference.md): it starts `idemproof serve` on the memory store,
// sends it N keyed refunds over HTTP (each a new key and order, as a long storm or a
// server left running gets them), and reports what the server answered and its peak and
// final resident set, read from /proc.
package servemem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one run.
type Config struct {
	Idemproof string        // the idemproof binary
	Refunds   int           // refunds to send
	Clients   int           // concurrent keep-alive clients
	Retention time.Duration // serve's --retention (its cleanup job runs at a quarter of it)
	Args      []string      // more serve flags (--memory-limit)
}

// Result is what the run saw.
type Result struct {
	Statuses map[int]int // answers by status; 0: transport errors
	PeakRSS  int64       // the server's VmHWM, bytes
	RSS      int64       // its VmRSS at the end, bytes
	Elapsed  time.Duration
}

// Run starts the server, sends the refunds and reads its memory.
func Run(ctx context.Context, cfg Config) (Result, error) {
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--retention", cfg.Retention.String()}, cfg.Args...)
	cmd := exec.CommandContext(ctx, cfg.Idemproof, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start serve: %w", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		return Result{}, fmt.Errorf("serve printed %q: %w", line, err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "idemproof serve: listening on ")
	if !ok {
		return Result{}, fmt.Errorf("serve printed %q, not its address", line)
	}
	go io.Copy(io.Discard, stderr)

	res := Result{Statuses: map[int]int{}}
	var mu sync.Mutex
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range max(cfg.Clients, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			counts := map[int]int{}
			for {
				i := next.Add(1)
				if i > int64(cfg.Refunds) || ctx.Err() != nil {
					break
				}
				counts[refund(ctx, client, base, i)]++
			}
			mu.Lock()
			for k, v := range counts {
				res.Statuses[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.PeakRSS, res.RSS, err = memoryOf(cmd.Process.Pid)
	return res, err
}

// refund sends refund i and returns the status (0 for a transport error).
func refund(ctx context.Context, client *http.Client, base string, i int64) int {
	n := strconv.FormatInt(i, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/refunds",
		bytes.NewReader([]byte(`{"order_id":"order-`+n+`","amount":4900,"reason":"requested_by_customer"}`)))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "servemem-"+n)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// memoryOf reads a process's peak and current resident set from /proc.
func memoryOf(pid int) (peak, now int64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read the server's memory: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read %s: %w", name, err)
		}
		if name == "VmHWM" {
			peak = kb << 10
		} else {
			now = kb << 10
		}
	}
	if peak == 0 {
		return 0, 0, errors.New("no VmHWM in /proc/PID/status")
	}
	return peak, now, nil
}
