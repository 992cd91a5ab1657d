package cpumeter

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tree writes files (path → content) under a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return dir
}

func TestCgroupV2ReadsUsageUsec(t *testing.T) {
	dir := tree(t, map[string]string{
		"proc/cgroup": "0::/system.slice/docker-abc.scope\n",
		"sys/system.slice/docker-abc.scope/cpu.stat": "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
	})
	read, err := cgroupReader(filepath.Join(dir, "sys"), filepath.Join(dir, "proc/cgroup"))
	require.NoError(t, err)
	got, err := read()
	require.NoError(t, err)
	require.Equal(t, 1500*time.Microsecond, got)
}

// A hybrid host lists the controller-less unified hierarchy beside v1's: the cpuacct
// controller is where the CPU is counted.
func TestCgroupV1ReadsCpuacctUsageEvenBesideAUnifiedLine(t *testing.T) {
	dir := tree(t, map[string]string{
		"proc/cgroup":                          "9:name=systemd:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/docker/abc\n",
		"sys/cpuacct/docker/abc/cpuacct.usage": "123456789\n",
		"sys/unified/docker/abc/cpu.stat":      "usage_usec 1\n",
	})
	read, err := cgroupReader(filepath.Join(dir, "sys"), filepath.Join(dir, "proc/cgroup"))
	require.NoError(t, err)
	got, err := read()
	require.NoError(t, err)
	require.Equal(t, 123456789*time.Nanosecond, got)
}

func TestCgroupV1ReadsTheJointCpuCpuacctMount(t *testing.T) {
	dir := tree(t, map[string]string{
		"proc/cgroup": "4:cpu,cpuacct:/docker/abc\n",
		"sys/cpu,cpuacct/docker/abc/cpuacct.usage": "42\n",
	})
	read, err := cgroupReader(filepath.Join(dir, "sys"), filepath.Join(dir, "proc/cgroup"))
	require.NoError(t, err)
	got, err := read()
	require.NoError(t, err)
	require.Equal(t, 42*time.Nanosecond, got)
}

func TestCgroupWithoutAccountingFileSaysWhere(t *testing.T) {
	dir := tree(t, map[string]string{"proc/cgroup": "0::/elsewhere\n"})
	_, err := cgroupReader(filepath.Join(dir, "sys"), filepath.Join(dir, "proc/cgroup"))
	require.ErrorContains(t, err, "no cpu accounting file")

	_, err = Cgroup("db", -1)
	require.ErrorContains(t, err, "cgroup of pid -1")
}

func TestCgroupStatWithoutUsageIsAnError(t *testing.T) {
	dir := tree(t, map[string]string{
		"proc/cgroup":         "0::/x\n",
		"sys/x/cpu.stat":      "user_usec 1\n",
		"sys/y/cpuacct.usage": "not a number\n",
	})
	read, err := cgroupReader(filepath.Join(dir, "sys"), filepath.Join(dir, "proc/cgroup"))
	require.NoError(t, err)
	_, err = read()
	require.ErrorContains(t, err, "no usage_usec line")
	_, err = readNanos(filepath.Join(dir, "sys/y/cpuacct.usage"))
	require.Error(t, err)
}

// The process meter counts this process's work: a busy loop moves it forward.
func TestProcessCountsThisProcessesWork(t *testing.T) {
	m := Process("go")
	require.Equal(t, "go", m.Name)
	before, err := m.Read()
	require.NoError(t, err)
	var x uint64
	for i := range uint64(50_000_000) {
		x += i * i
	}
	after, err := m.Read()
	require.NoError(t, err)
	require.Greater(t, after, before, "a busy loop (%d) spent no CPU", x)
}
