//go:build !linux

package proc

import (
	"os"
	"syscall"
)

// Supported reports whether the /proc scan works on this system: the
// engine starts nothing where it does not.
const Supported = false

func SysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }

func ReadStat(int) (Stat, error) { return Stat{}, ErrUnsupported }

func Scan([]byte, int, uint64) ([]Stat, error) { return nil, ErrUnsupported }

func Alive(Stat) bool { return false }

func Signal(Stat, syscall.Signal) {}

func SignalGroup(int, syscall.Signal) error { return ErrUnsupported }

func LockFile(*os.File) error { return nil }
