//go:build !linux

package exec

import (
	"os"
	"syscall"
)

// procSupported reports whether the /proc scan works on this system: the
// engine starts nothing where it does not.
const procSupported = false

type procStat struct {
	pid   int
	state byte
	pgid  int
	start uint64
}

func (s procStat) gone() bool { return true }

func sysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

func readStat(int) (procStat, error) { return procStat{}, errNoProcSupport }

func scan([]byte, int, uint64) ([]procStat, error) { return nil, errNoProcSupport }

func alive(procStat) bool { return false }

func signal(procStat, syscall.Signal) {}

func signalGroup(int, syscall.Signal) error { return errNoProcSupport }

func lockFile(*os.File) error { return nil }
