package badgerstore

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// health is the store's watch on its own ability to persist: the
// directory it opened still in place (the same device and inode at the
// same path: badger keeps writing to its open files after the directory
// is removed, and those writes, and their fsyncs, succeed), writable,
// with room left, and badger's own writes succeeding. Once a check fails
// the store is failed for good (see ErrCannotPersist): nothing more is
// acknowledged until it is closed and opened again.
type health struct {
	dir     string
	id      dirID
	reserve uint64 // free bytes under which the directory counts as full; 0: unchecked

	// err is the first failure (nil while healthy): read on every
	// transaction, so an atomic pointer rather than a lock.
	err atomic.Pointer[error]
}

// dirID identifies a directory: its device and inode.
type dirID struct{ dev, ino uint64 }

// newHealth records dir's identity and checks it once (Open refuses a
// directory that cannot persist already).
func newHealth(dir string, reserve uint64) (*health, error) {
	id, err := statDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCannotPersist, err)
	}
	h := &health{dir: dir, id: id, reserve: reserve}
	if err := h.probe(); err != nil {
		return nil, err
	}
	return h, nil
}

// check returns the error of a failed store, or probes the directory and
// fails the store if the probe fails.
func (h *health) check() error {
	if err := h.failed(); err != nil {
		return err
	}
	if err := h.probe(); err != nil {
		return h.fail(err)
	}
	return nil
}

// probe checks the directory: same identity, writable, room left.
func (h *health) probe() error {
	id, err := statDir(h.dir)
	switch {
	case err != nil:
		return fmt.Errorf("%w: the directory is gone: %w", ErrCannotPersist, err)
	case id != h.id:
		return fmt.Errorf("%w: the directory was replaced (another directory is at its path)", ErrCannotPersist)
	}
	if err := writable(h.dir); err != nil {
		return fmt.Errorf("%w: the directory is not writable: %w", ErrCannotPersist, err)
	}
	if h.reserve > 0 {
		free, ok := freeBytes(h.dir)
		if ok && free < h.reserve {
			return fmt.Errorf("%w: the disk is full (%d bytes free, under the reserve of %d)", ErrCannotPersist, free, h.reserve)
		}
	}
	return nil
}

// gone reports whether the directory is no longer the one opened.
func (h *health) gone() bool {
	id, err := statDir(h.dir)
	return err != nil || id != h.id
}

// fail marks the store failed with err (wrapped in ErrCannotPersist if
// it is not already) and returns the store's error: the first failure.
func (h *health) fail(err error) error {
	if !errors.Is(err, ErrCannotPersist) {
		err = fmt.Errorf("%w: %w", ErrCannotPersist, err)
	}
	h.err.CompareAndSwap(nil, &err)
	return *h.err.Load()
}

// failed returns the first failure, or nil.
func (h *health) failed() error {
	if p := h.err.Load(); p != nil {
		return *p
	}
	return nil
}
