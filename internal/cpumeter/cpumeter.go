// Package cpumeter reads how much CPU time has been spent so far: by this process
// (getrusage: every goroutine, the runtime and the kernel's work on its behalf), or by a
// control group — a container's processes, the exited ones included — found from the
// PID of one of them (/proc/PID/cgroup, then cgroup v2's cpu.stat or v1's
// cpuacct.usage).
//
// Benchmarks read meters around rounds of work to say where a request's CPU goes. On a
// machine whose cores the benchmark's client, server and database share, the CPU a
// request costs each of them is what decides throughput, and it stays comparable when
// wall time swings with other load.
//
// A control group is only readable where the container runs on this machine's kernel
// and its /sys/fs/cgroup is mounted here; elsewhere (a remote engine, a VM-backed
// desktop engine) Cgroup returns an error and a caller does without the meter.
package cpumeter

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Meter is a named reading of CPU time spent so far.
type Meter struct {
	// Name says whose CPU it is, as benchmark metrics name it ("go", "db").
	Name string
	read func() (time.Duration, error)
}

// Read returns the CPU time spent so far; only differences between two reads mean
// anything.
func (m Meter) Read() (time.Duration, error) { return m.read() }

// Process is this process's CPU time, user and system.
func Process(name string) Meter { return Meter{Name: name, read: processCPU} }

// cgroupRoot is where the control group hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// Cgroup is the CPU time of the control group the process pid belongs to: for a
// container's main process, the whole container's. It is read once here, so an error
// comes now rather than from the first Read.
func Cgroup(name string, pid int) (Meter, error) {
	read, err := cgroupReader(cgroupRoot, fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return Meter{}, fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	if _, err := read(); err != nil {
		return Meter{}, fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	return Meter{Name: name, read: read}, nil
}

// cgroupReader finds the file holding the CPU usage of the control group that
// procCgroup (a /proc/PID/cgroup) names, under root: the unified hierarchy's cpu.stat
// when it is mounted there (v2 alone, or v2 beside v1 at root/unified), else v1's
// cpuacct controller.
func cgroupReader(root, procCgroup string) (func() (time.Duration, error), error) {
	b, err := os.ReadFile(procCgroup)
	if err != nil {
		return nil, err
	}
	var v1, v2 string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasController(parts[1], "cpuacct"):
			v1 = parts[2]
		}
	}
	// With v1 present, a v2 line is only the (controller-less) unified mount's.
	if v1 != "" {
		for _, dir := range []string{"cpuacct", "cpu,cpuacct", "cpuacct,cpu"} {
			file := filepath.Join(root, dir, v1, "cpuacct.usage")
			if _, err := os.Stat(file); err == nil {
				return func() (time.Duration, error) { return readNanos(file) }, nil
			}
		}
	}
	if v2 != "" {
		for _, dir := range []string{"", "unified"} {
			file := filepath.Join(root, dir, v2, "cpu.stat")
			if _, err := os.Stat(file); err == nil {
				return func() (time.Duration, error) { return readUsageUsec(file) }, nil
			}
		}
	}
	return nil, errors.New("no cpu accounting file for it under " + root)
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readNanos reads v1's cpuacct.usage: nanoseconds.
func readNanos(file string) (time.Duration, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	return time.Duration(n), nil
}

// readUsageUsec reads the usage_usec line of v2's cpu.stat: microseconds.
func readUsageUsec(file string) (time.Duration, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", file, err)
			}
			return time.Duration(n) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("%s: no usage_usec line", file)
}
