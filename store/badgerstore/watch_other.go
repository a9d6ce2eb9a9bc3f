//go:build !linux

package badgerstore

import "os"

// dirWatch is Linux only (inotify); group commit, its only user, is
// enabled on Linux only (see Options.groupCommit).
type dirWatch struct{}

func newDirWatch(string) *dirWatch { return nil }

func (*dirWatch) created() (created, ok bool) { return true, false }

func (*dirWatch) close() error { return nil }

func fdatasync(f *os.File) error { return f.Sync() }
