package badgerstore

import "testing"

// BenchmarkHealthProbe is the directory check each sync round ends with
// (and, without group commit, each commit): stat, access and statfs.
func BenchmarkHealthProbe(b *testing.B) {
	h, err := newHealth(b.TempDir(), 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := h.check(); err != nil {
			b.Fatal(err)
		}
	}
}
