//go:build !linux

package badgerstore

import (
	"errors"
	"io/fs"
	"os"
)

// fsyncFile fsyncs the file at path. Group commit, its only user, is
// enabled on Linux only (see Options.groupCommit); this keeps the package
// building elsewhere.
func fsyncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	serr := f.Sync()
	cerr := f.Close()
	return errors.Join(serr, cerr)
}
