package badgerstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// dirWatch tells a sync round whether badger may have created a log file
// since the round before: an inotify watch on the directory for entries
// created or moved in. The kernel queues the event inside the system call
// that creates the entry, so a creation that happened before a round
// started is in the queue when the round drains it.
type dirWatch struct {
	fd  int
	buf []byte
}

// newDirWatch watches dir; nil if inotify is not available (then every
// round lists the directory).
func newDirWatch(dir string) *dirWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR); err != nil {
		_ = unix.Close(fd)
		return nil
	}
	return &dirWatch{fd: fd, buf: make([]byte, 4096)}
}

// created drains the queued events and reports whether one may be the
// creation of a log file (a lost event counts as one). ok is false once
// the watch can no longer be trusted (the kernel removed it, or reading
// failed): the caller must then list the directory every round.
func (w *dirWatch) created() (created, ok bool) {
	for {
		n, err := unix.Read(w.fd, w.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return created, true
		case err != nil || n < unix.SizeofInotifyEvent:
			return true, false
		}
		for b := w.buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			// struct inotify_event: wd, mask, cookie, len, then len
			// bytes of NUL-padded name.
			mask := binary.NativeEndian.Uint32(b[4:8])
			nameLen := int(binary.NativeEndian.Uint32(b[12:16]))
			if unix.SizeofInotifyEvent+nameLen > len(b) {
				return true, false
			}
			name := bytes.TrimRight(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+nameLen], "\x00")
			switch {
			case mask&unix.IN_IGNORED != 0:
				return true, false
			case mask&unix.IN_Q_OVERFLOW != 0:
				created = true
			default:
				if _, isLog := parseLogFile(string(name)); isLog {
					created = true
				}
			}
			b = b[unix.SizeofInotifyEvent+nameLen:]
		}
	}
}

func (w *dirWatch) close() error { return unix.Close(w.fd) }

// fdatasync writes back the file's data through f (see fsyncFile).
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
