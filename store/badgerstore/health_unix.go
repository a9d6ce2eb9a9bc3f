//go:build !windows && !plan9 && !js && !wasip1

package badgerstore

import "golang.org/x/sys/unix"

// statDir returns dir's device and inode (errors name no path: they may
// reach a user).
func statDir(dir string) (dirID, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return dirID{}, err
	}
	return dirID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

// writable is access(2) with W_OK: false on a read-only mount for root
// too, and for a directory whose mode refuses this process.
func writable(dir string) error {
	return unix.Access(dir, unix.W_OK)
}

// freeBytes returns the bytes available to an unprivileged writer.
func freeBytes(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true //nolint:unconvert // field types differ by platform
}
