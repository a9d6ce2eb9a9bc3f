//go:build windows || plan9 || js || wasip1 || aix

package badgerstore

// dirLock is a no-op where flock is unavailable: badger's own directory
// lock still refuses a second Open, with an error that does not match
// ErrLocked.
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) release() error { return nil }
