//go:build !windows && !plan9 && !js && !wasip1 && !aix

package badgerstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockFileName is the file Open locks, next to badger's own files. badger
// locks the directory too, but reports a taken lock only as an error string;
// this lock is taken first so that a second Open returns ErrLocked.
const lockFileName = "badgerstore.lock"

// dirLock is an exclusive flock on dir/badgerstore.lock. flock locks belong
// to an open file, so a second Open in the same process is refused as well
// as one in another process, and the kernel releases the lock when the
// process dies.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: open lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("badgerstore: lock %s: %w", dir, err)
	}
	return &dirLock{f: f}, nil
}

// release unlocks; closing the file drops the flock.
func (l *dirLock) release() error { return l.f.Close() }
