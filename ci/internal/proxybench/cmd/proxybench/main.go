// Command proxybench measures `idemproof proxy` side by side with a bare
// httputil.ReverseProxy, nginx and Toxiproxy in front of one Go upstream on 127.0.0.1,
// with wrk in interleaved rounds (ci/bench proxy starts it; docs/faultproxy.md reports
// it). It re-executes itself for the upstream and the bare ReverseProxy, so that every
// target is a process of its own whose CPU time can be read from /proc.
//
//	proxybench -idemproof BIN -toxiproxy BIN [-rounds 5] [-duration 5s] [-conns 32,1]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/ci/internal/proxybench"
)

// reply is the upstream's answer: 124 bytes of JSON, like a created refund.
var reply = []byte(`{"id":"re_0123456789abcdef01234567","order_id":"bench-order-000001","amount":4900,"reason":"requested","created":1764547200}`)

const (
	baseToxiproxy    = "toxiproxy"
	baseReverseProxy = "reverseproxy"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "upstream":
			serve(os.Args[2], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
				w.WriteHeader(http.StatusCreated)
				w.Write(reply)
			}))
			return
		case "reverseproxy":
			to, err := url.Parse(os.Args[3])
			if err != nil {
				fatal(err)
			}
			rp := &httputil.ReverseProxy{
				Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(to) },
				Transport: &http.Transport{MaxIdleConnsPerHost: 256},
			}
			serve(os.Args[2], rp)
			return
		}
	}
	if err := run(); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "proxybench:", err)
	os.Exit(1)
}

// serve listens on addr and prints the address it got on stdout, then serves forever.
func serve(addr string, h http.Handler) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fatal(err)
	}
	fmt.Println(ln.Addr().String())
	fatal(http.Serve(ln, h))
}

// target is one process (group) under test.
type target struct {
	name string
	url  string
	cmd  *exec.Cmd
}

func run() error {
	idemproof := flag.String("idemproof", "", "the idemproof binary")
	toxiproxy := flag.String("toxiproxy", "", "the toxiproxy server binary (v2.12)")
	nginx := flag.String("nginx", "nginx", "the nginx binary")
	wrk := flag.String("wrk", "wrk", "the wrk binary")
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	duration := flag.Duration("duration", 5*time.Second, "length of one wrk run")
	connsFlag := flag.String("conns", "32,1", "connection counts, comma-separated")
	flag.Parse()
	if *idemproof == "" || *toxiproxy == "" {
		return errors.New("-idemproof and -toxiproxy are required")
	}
	var conns []int
	for _, c := range strings.Split(*connsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n <= 0 {
			return fmt.Errorf("-conns %q: want positive integers like 32,1", *connsFlag)
		}
		conns = append(conns, n)
	}
	dir, err := os.MkdirTemp("", "idemproof-proxybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}

	var targets []*target
	defer func() {
		for _, t := range targets {
			stop(t.cmd)
		}
	}()
	start := func(name string, ready func(*bufio.Reader) (string, error), path string, args ...string) (*target, error) {
		cmd := exec.Command(path, args...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		var errBuf bytes.Buffer
		cmd.Stderr = &errBuf
		if name == "idemproof proxy" || strings.HasPrefix(name, "idemproof proxy") {
			// It prints its address on stderr.
			pr, pw := io.Pipe()
			cmd.Stderr = pw
			out = pr
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		t := &target{name: name, cmd: cmd}
		targets = append(targets, t)
		addr, err := ready(bufio.NewReader(out))
		if err != nil {
			return nil, fmt.Errorf("start %s: %w (%s)", name, err, errBuf.String())
		}
		go io.Copy(io.Discard, out)
		t.url = addr
		return t, nil
	}
	firstLine := func(r *bufio.Reader) (string, error) {
		line, err := r.ReadString('\n')
		return "http://" + strings.TrimSpace(line), err
	}

	upstream, err := start("direct", firstLine, self, "upstream", "127.0.0.1:0")
	if err != nil {
		return err
	}
	upHost := strings.TrimPrefix(upstream.url, "http://")
	if _, err := start(baseReverseProxy, firstLine, self, "reverseproxy", "127.0.0.1:0", upstream.url); err != nil {
		return err
	}
	proxyReady := func(r *bufio.Reader) (string, error) {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return "", err
			}
			// "idemproof proxy: listening on http://127.0.0.1:N, admin http://…"
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				u, _, _ := strings.Cut(rest, ",")
				return strings.TrimSpace(u), nil
			}
		}
	}
	if _, err := start("idemproof proxy", proxyReady, *idemproof, "proxy", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--upstream", upstream.url); err != nil {
		return err
	}
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, hundredRules(), 0o644); err != nil {
		return err
	}
	if _, err := start("idemproof proxy, 100 rules", proxyReady, *idemproof, "proxy", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
		"--upstream", upstream.url, "--rules", rules); err != nil {
		return err
	}
	nginxPort, err := freePort()
	if err != nil {
		return err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, nginxConf(dir, nginxPort, upHost), 0o644); err != nil {
		return err
	}
	nginxT, err := start("nginx", func(*bufio.Reader) (string, error) { return "http://127.0.0.1:" + strconv.Itoa(nginxPort), nil },
		*nginx, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	if err != nil {
		return err
	}
	if err := awaitHTTP(nginxT.url); err != nil {
		return fmt.Errorf("nginx: %w", err)
	}
	toxiAPI, err := freePort()
	if err != nil {
		return err
	}
	toxiT, err := start(baseToxiproxy, func(*bufio.Reader) (string, error) { return "", nil },
		*toxiproxy, "-host", "127.0.0.1", "-port", strconv.Itoa(toxiAPI))
	if err != nil {
		return err
	}
	toxiURL, err := toxiproxyListen(toxiAPI, upHost)
	if err != nil {
		return err
	}
	toxiT.url = toxiURL

	script := filepath.Join(dir, "post.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o644); err != nil {
		return err
	}
	for _, t := range targets {
		if err := awaitHTTP(t.url); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "proxybench: %d rounds of %v per target at %v connections\n", *rounds, *duration, conns)
	var samples []proxybench.Sample
	for round := range *rounds {
		for _, c := range conns {
			// Which target goes first rotates from round to round.
			for i := range targets {
				t := targets[(i+round)%len(targets)]
				s, err := measure(*wrk, script, t, c, *duration)
				if err != nil {
					return err
				}
				s.Round = round
				samples = append(samples, s)
				fmt.Fprintf(os.Stderr, "round %d, %2d conns, %-28s %8.0f req/s  p50 %7v  %5.1f µs CPU/req\n",
					round+1, c, t.name, s.Wrk.RPS, s.Wrk.P50, float64(s.CPUPerRequest())/1e3)
			}
		}
	}
	rows, err := proxybench.Summarise(samples, baseToxiproxy, baseReverseProxy)
	if err != nil {
		return err
	}
	fmt.Print(proxybench.Table(rows, baseToxiproxy, baseReverseProxy))
	return nil
}

// stop ends a target with SIGTERM, so that nginx's master stops its workers too (a
// SIGKILL would leave them running, holding the port), and kills what is left after a
// bounded wait.
func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// measure runs wrk once against t, reading t's CPU time before and after.
func measure(wrk, script string, t *target, conns int, d time.Duration) (proxybench.Sample, error) {
	threads := min(conns, 2)
	before, err := cpuTime(t.cmd.Process.Pid)
	if err != nil {
		return proxybench.Sample{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, wrk, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", fmt.Sprintf("%.0fs", d.Seconds()), "--latency", "-s", script, t.url+"/v1/refunds").CombinedOutput()
	if err != nil {
		return proxybench.Sample{}, fmt.Errorf("wrk against %s: %w\n%s", t.name, err, out)
	}
	after, err := cpuTime(t.cmd.Process.Pid)
	if err != nil {
		return proxybench.Sample{}, err
	}
	w, err := proxybench.ParseWrk(string(out))
	if err != nil {
		return proxybench.Sample{}, fmt.Errorf("%s: %w\n%s", t.name, err, out)
	}
	return proxybench.Sample{Target: t.name, Conns: conns, Wrk: w, CPU: after - before}, nil
}

// cpuTime is the user+system time of pid and its direct children (nginx's workers).
func cpuTime(pid int) (time.Duration, error) {
	total, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if ppid, err := procPPID(child); err == nil && ppid == pid {
			if c, err := procCPU(child); err == nil {
				total += c
			}
		}
	}
	return total, nil
}

// statFields are /proc/PID/stat's fields after the command name.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

func procPPID(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil || len(f) < 2 {
		return 0, errors.New("no ppid")
	}
	return strconv.Atoi(f[1])
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

func procCPU(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	// Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unreadable CPU times", pid)
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// awaitHTTP waits, bounded, until url answers a POST.
func awaitHTTP(url string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Post(url+"/v1/refunds", "application/json", strings.NewReader(`{"order_id":"o","amount":1}`))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering at %s: %w", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// toxiproxyListen creates Toxiproxy's proxy to the upstream through its API (waiting,
// bounded, for the API) and returns the URL it listens on.
func toxiproxyListen(apiPort int, upstream string) (string, error) {
	body, _ := json.Marshal(map[string]any{"name": "bench", "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/proxies", apiPort), "application/json", bytes.NewReader(body))
		if err == nil {
			var p struct {
				Listen string `json:"listen"`
			}
			err = json.NewDecoder(resp.Body).Decode(&p)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusCreated {
				return "http://" + p.Listen, nil
			}
			if err == nil {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("create the toxiproxy proxy: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hundredRules are 100 rules that never match the benchmark's requests (another path),
// each of a kind that must look at the request.
func hundredRules() []byte {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "- name: never-%d\n  match: {method: POST, path: /v1/other-%d, key: \"*\"}\n  fault: {type: after-status, status: 503}\n", i, i)
	}
	return []byte(b.String())
}

// nginxConf is a plain keep-alive reverse proxy (HTTP/1.1 to a keepalive upstream pool).
func nginxConf(dir string, port int, upstream string) []byte {
	return []byte(fmt.Sprintf(`daemon off;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    upstream backend { server %[3]s; keepalive 64; }
    server {
        listen 127.0.0.1:%[2]d;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
`, dir, port, upstream))
}

// wrkScript posts a refund with a new Idempotency-Key on every request.
const wrkScript = `
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local n = 0
local body = '{"order_id":"bench-order-000001","amount":4900}'
function request()
  n = n + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json",
    ["Idempotency-Key"] = "bench-" .. tid .. "-" .. n}, body)
end
`
