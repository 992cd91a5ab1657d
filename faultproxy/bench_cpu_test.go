package faultproxy_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuMeter reports the process's CPU time (user+system) per operation. On a shared,
// loaded machine wall-clock numbers swing with other tenants' load; CPU time per request
// is what the proxy itself costs and stays comparable between runs.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{start: processCPU()} }

func (m cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64((processCPU()-m.start).Microseconds())/float64(b.N), "cpu-µs/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
