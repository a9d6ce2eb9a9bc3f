//go:build windows || plan9 || js || wasip1

package badgerstore

import (
	"errors"
	"os"
)

// statDir sees only whether the directory is there: no inode here.
func statDir(dir string) (dirID, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return dirID{}, errors.Unwrap(err)
	}
	if !fi.IsDir() {
		return dirID{}, errors.New("not a directory")
	}
	return dirID{}, nil
}

func writable(string) error { return nil }

func freeBytes(string) (uint64, bool) { return 0, false }
