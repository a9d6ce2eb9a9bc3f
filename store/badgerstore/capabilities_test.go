package badgerstore_test

import (
	"testing"

	"github.com/batonhq/baton/store/badgerstore"
)

// TestIncarnation checks Incarnation: each Open of a directory mints
// a new, non-empty incarnation, kept while the store is open.
func TestIncarnation(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for range 3 {
		s, err := badgerstore.Open(dir, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		var ex interface{ Incarnation() string } = s
		inc := ex.Incarnation()
		if inc == "" || seen[inc] {
			t.Errorf("Incarnation() = %q after %d opens (seen: %v); want a new non-empty id", inc, len(seen), seen)
		}
		if again := s.Incarnation(); again != inc {
			t.Errorf("Incarnation changed while open: %q then %q", inc, again)
		}
		seen[inc] = true
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCloseWakesSubscribers checks that Close wakes every subscriber, so
// that a reader waiting for changes reads again and learns the store is
// closed.
func TestCloseWakesSubscribers(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	a, cancelA := s.Subscribe("ws-a")
	defer cancelA()
	all, cancelAll := s.Subscribe("")
	defer cancelAll()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan struct{}{"ws-a": a, "all": all} {
		select {
		case <-ch:
		default:
			t.Errorf("subscriber %s not woken by Close", name)
		}
	}
}
