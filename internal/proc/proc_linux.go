//go:build linux

package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Supported reports whether the /proc scan works on this system.
const Supported = true

// SysProcAttr puts the child in its own process group and asks the kernel
// to send it sig when the host's thread that spawned it dies.
func SysProcAttr(sig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
}

// ReadStat parses /proc/<pid>/stat. The command name sits in parentheses
// and may hold spaces and parentheses itself, so the fields are counted
// after the last ')'.
func ReadStat(pid int) (Stat, error) {
	var buf [512]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return Stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); pgrp is field 5, starttime field 22.
	if i < 0 || len(f) < 20 {
		return Stat{}, errors.New("proc: malformed /proc stat")
	}
	pgid, err1 := strconv.Atoi(string(f[2]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || len(f[0]) != 1 {
		return Stat{}, errors.New("proc: malformed /proc stat")
	}
	return Stat{pid: pid, state: f[0][0], pgid: pgid, Start: start}, nil
}

// readSmall reads a small /proc file into buf with three system calls
// (os.ReadFile needs five); a scan reads one per process.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

// hasEnv reports whether the environment the process started with holds
// the exact entry want ("KEY=value"). An unreadable environ (another
// user's process) reports false.
func hasEnv(pid int, want []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// Scan finds the live processes of a launch: those whose environment holds
// marker, plus every process in the process group of one of them, plus
// every process of group pgid (when non-zero). Processes that started
// before minStart cannot belong to the launch and are skipped (their
// environ is not even read). The host's own process and group never count.
func Scan(marker []byte, pgid int, minStart uint64) ([]Stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	self, selfGroup := os.Getpid(), syscall.Getpgrp()
	var all []Stat
	groups := map[int]bool{}
	if pgid > 0 && pgid != selfGroup {
		groups[pgid] = true
	}
	var out []Stat
	for _, n := range names {
		// The processes are the numeric entries.
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		st, err := ReadStat(pid)
		if err != nil || st.Start < minStart || st.Gone() {
			continue
		}
		if hasEnv(pid, marker) {
			out = append(out, st)
			if st.pgid != selfGroup && st.pgid > 1 {
				groups[st.pgid] = true
			}
			continue
		}
		all = append(all, st)
	}
	for _, st := range all {
		if groups[st.pgid] {
			out = append(out, st)
		}
	}
	return out, nil
}

// Alive reports whether the process st named still runs code: the same pid
// with the same start time, not a zombie.
func Alive(st Stat) bool {
	now, err := ReadStat(st.pid)
	return err == nil && now.Start == st.Start && !now.Gone()
}

// Signal sends sig to the process st names, and only to it: the handle is
// taken first (a pidfd, on kernels that have them), then the start time is
// checked again, so a pid reused meanwhile is never signalled.
func Signal(st Stat, sig syscall.Signal) {
	p, err := os.FindProcess(st.pid)
	if err != nil {
		return
	}
	defer p.Release()
	if Alive(st) {
		_ = p.Signal(sig)
	}
}

// SignalGroup sends sig to every process of group pgid; none when pgid
// is not a group (0 or 1) or is the host's own.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 || pgid == syscall.Getpgrp() {
		return nil
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// LockFile takes an exclusive advisory lock on f without waiting; it is
// released when f is closed.
func LockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
