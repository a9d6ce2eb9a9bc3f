//go:build unix

package badgerstore_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) this process has
// used so far, every thread included: with it the benchmarks report CPU
// per operation, which a busy machine disturbs less than wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
