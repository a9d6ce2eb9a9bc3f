package badgerstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/batonhq/baton/store/badgerstore"
)

// TestOpenAfterCrashLeftEmptyLogs: a crash between the creation of a
// memtable or value log file and its sizing leaves a 0-byte file, which
// badger alone refuses to open; Open removes it and keeps everything else.
func TestOpenAfterCrashLeftEmptyLogs(t *testing.T) {
	for _, name := range []string{"00099.mem", "000099.vlog"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := badgerstore.Open(dir, badgerstore.Options{Small: true})
			if err != nil {
				t.Fatal(err)
			}
			seed(t, s)
			want := snapshot(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err = badgerstore.Open(dir, badgerstore.Options{Small: true})
			if err != nil {
				t.Fatalf("Open with an empty %s: %v", name, err)
			}
			defer s.Close()
			checkSeeded(t, s, want)
		})
	}
}
