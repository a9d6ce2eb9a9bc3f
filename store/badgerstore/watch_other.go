//go:build !linux

package badgerstore

import "os"

// dirWatch is Linux only (inotify); group commit, its only user, is
// enabled on Linux only (see Options.groupCommit).
type dirWatch struct{}

func newDirWatch(string) *dirWatch { return nil }

func (*dirWatch) created() (created, ok bool) { return true, false }

func (*dirWatch) close() error { return nil }

// fdatasync is f.Sync where group commit, its only user, is off (see
// Options.groupCommit): it keeps the package building elsewhere.
func fdatasync(f *os.File) error { return f.Sync() }
