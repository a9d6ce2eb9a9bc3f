package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// claims are the cross-generation reservations of canonical session paths:
// one file per path in a directory every generation of a host shares. A
// claim is held by an exclusive flock(2) on its file, so it stands exactly
// as long as its owner process lives: the kernel drops the lock when the
// process dies, however it dies, and a reused pid can never revive it. The
// file's content names the owner for session_path_in_use.
//
// Claim files are kept after release, one small file per path ever
// opened: freeing a file's blocks costs a journal transaction on common
// file systems (about 0.2 ms here), which would dominate a drain that
// parks a thousand sessions, while closing a kept file costs microseconds.
// Removing the directory while no host runs is safe.
type claims struct {
	dir   string // "" disables cross-process claims
	owner wire.Owner
}

// claimRecord is the content of a claim file.
type claimRecord struct {
	Owner wire.Owner `json:"owner"`
	Path  string     `json:"path"`
}

func newClaims(dir string, owner wire.Owner) (*claims, error) {
	if dir == "" {
		return &claims{owner: owner}, nil
	}
	if !filepath.IsAbs(dir) {
		return nil, baton.Errorf(errInvalidOptions, "claim directory %q is not absolute", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, baton.Errorf(errInvalidOptions, "claim directory: %v", err)
	}
	return &claims{dir: dir, owner: owner}, nil
}

func (c *claims) fileFor(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:20])+".claim")
}

// acquire claims path for this owner and returns what releases the claim:
// closing its file drops the lock, and the file and its (now stale) record
// stay. It returns ErrPathInUse (with the
// holder as errorData) when another live process holds it, or an
// ErrRuntime error when the claim file cannot be used.
func (c *claims) acquire(path string) (release func(), err error) {
	if c.dir == "" {
		return func() {}, nil
	}
	name := c.fileFor(path)
	// Claim files are never unlinked by a host, but someone may clear the
	// directory: a lock on a file no longer at its name is worthless, so
	// retry on the new one. Bounded, since each retry needs another unlink.
	for range 16 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, baton.Errorf(ErrRuntime, "open claim for %s: %v", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			owner := readClaimOwner(f)
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, pathInUse(owner, path)
			}
			return nil, baton.Errorf(ErrRuntime, "lock claim for %s: %v", path, err)
		}
		if !sameFile(f, name) {
			_ = f.Close()
			continue
		}
		if err := writeClaimRecord(f, claimRecord{Owner: c.owner, Path: path}); err != nil {
			_ = f.Close()
			return nil, baton.Errorf(ErrRuntime, "write claim for %s: %v", path, err)
		}
		return func() { _ = f.Close() }, nil
	}
	return nil, baton.Errorf(ErrRuntime, "claim for %s kept changing", path)
}

// writeClaimRecord overwrites the record in place, padded with spaces to
// the file's size, so the file never shrinks and no block is freed.
func writeClaimRecord(f *os.File, rec claimRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(b)) {
		b = append(b, bytes.Repeat([]byte(" "), int(fi.Size())-len(b))...)
	}
	_, err = f.WriteAt(b, 0)
	return err
}

func sameFile(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

// readClaimOwner reads the owner a held claim names. A new holder writes
// its record right after locking, so a contender may still read the
// previous holder's record: one whose process is gone (kill(pid, 0) fails
// with ESRCH) cannot be the holder and is reported as unknown (zero), as
// is an empty or unreadable record.
func readClaimOwner(f *os.File) wire.Owner {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64<<10))
	if err != nil {
		return wire.Owner{}
	}
	var rec claimRecord
	if json.Unmarshal(b, &rec) != nil || rec.Owner.PID <= 0 {
		return wire.Owner{}
	}
	if errors.Is(syscall.Kill(rec.Owner.PID, 0), syscall.ESRCH) {
		return wire.Owner{}
	}
	return rec.Owner
}
