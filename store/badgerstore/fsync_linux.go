package badgerstore

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// fsyncFile fdatasyncs the file at path through a descriptor of its own:
// the kernel writes back every dirty page of the file, those badger
// dirtied through its memory map included (what badger's own msync does).
// A file gone meanwhile was flushed and deleted by badger, which synced
// its content elsewhere first.
func fsyncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	serr := syscall.Fdatasync(int(f.Fd()))
	cerr := f.Close()
	return errors.Join(serr, cerr)
}
