package badgerstore_test

import (
	"errors"
	"os"
	"testing"

	"github.com/batonhq/baton/handoff/handofftest"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/store/storetest"
)

// testOptions is the profile tests use: small, and without fsync (the
// durability mode does not change what a transaction sees).
var testOptions = badgerstore.Options{Small: true, NoSync: true}

// open opens a store in dir with opts, closed at the end of the test.
func open(t testing.TB, dir string, opts badgerstore.Options) *badgerstore.Store {
	t.Helper()
	s, err := badgerstore.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// TestConformance runs the store suite, each subtest on a fresh directory,
// in the durable default mode (group commit), with badger's per-commit
// fsync, and without fsync.
func TestConformance(t *testing.T) {
	for _, opts := range []badgerstore.Options{
		{Small: true},
		{PerCommitSync: true},
		testOptions,
	} {
		name := profileName(opts.Small) + "/" + syncName(opts.NoSync)
		if opts.PerCommitSync {
			name += "/percommit"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), opts) })
		})
	}
}

// TestTransfers runs the handoff property harness (rapid's default 100
// sequences, two coordinators on one store) over a fresh directory per
// sequence, with fsync on: it costs about 10% over NoSync here,
// so the harness checks the mode baton ships with.
func TestTransfers(t *testing.T) {
	base := t.TempDir()
	handofftest.Run(t, handofftest.Config{NewStore: func() (store.Store, func(), error) {
		dir, err := os.MkdirTemp(base, "seq-")
		if err != nil {
			return nil, nil, err
		}
		s, err := badgerstore.Open(dir, badgerstore.Options{Small: true})
		if err != nil {
			return nil, nil, err
		}
		return s, func() {
			_ = s.Close()
			_ = os.RemoveAll(dir)
		}, nil
	}})
}
