package pgstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// cpuMeter reads the CPU time used so far by this process and by the
// test server (its postmaster, its live backends and the ones that
// exited), for the benchmarks' CPU per operation. The server's is read
// from /proc, so only for a server on this machine; server reports
// false when it cannot be read.
type cpuMeter struct {
	postmaster int
}

// newCPUMeter finds the test server's postmaster from its data
// directory's postmaster.pid.
func newCPUMeter(tb testing.TB) *cpuMeter {
	tb.Helper()
	m := &cpuMeter{}
	conn, err := pgx.Connect(tb.Context(), serverURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(tb.Context())
	var dir string
	if err := conn.QueryRow(tb.Context(), "SHOW data_directory").Scan(&dir); err != nil {
		return m
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return m
	}
	first, _, _ := strings.Cut(string(b), "\n")
	m.postmaster, _ = strconv.Atoi(strings.TrimSpace(first))
	return m
}

// self is this process's CPU time (user and system).
func (m *cpuMeter) self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// server is the server's CPU time: the postmaster's with that of its
// children that ended, and that of its live children.
func (m *cpuMeter) server() (time.Duration, bool) {
	if m.postmaster == 0 {
		return 0, false
	}
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, false
	}
	var ticks int64
	found := false
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The fields after the command (which may hold spaces), from
		// field 3 (state): ppid is field 4, utime..cstime 14..17.
		_, rest, ok := strings.Cut(string(b), ") ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 15 {
			continue
		}
		pid, _ := strconv.Atoi(strings.Fields(string(b))[0])
		ppid, _ := strconv.Atoi(f[1])
		n := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
		switch {
		case pid == m.postmaster:
			found = true
			ticks += n(14) + n(15) + n(16) + n(17)
		case ppid == m.postmaster:
			ticks += n(14) + n(15)
		}
	}
	return time.Duration(ticks) * clockTick, found
}
