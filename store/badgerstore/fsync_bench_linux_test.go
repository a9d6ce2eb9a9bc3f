package badgerstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkFdatasync is the cost of the sync a group commit round makes,
// without badger: a page written through a shared memory map of a 16 MiB
// file (as badger writes its logs), then an fdatasync of the file, by 1
// or 2 goroutines at once, each through a descriptor of its own (what
// overlapping rounds would do). It reports syncs/s and the CPU time of
// the process per sync (the kernel's share included), which tell whether
// two rounds in fdatasync at once would get through more syncs than one
// at a time, and what each costs the cores.
func BenchmarkFdatasync(b *testing.B) {
	const size = 16 << 20
	for _, conc := range []int{1, 2} {
		b.Run(fmt.Sprintf("goroutines=%d", conc), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "00001.mem")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(size); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = unix.Munmap(m) }()
			fds := make([]*os.File, conc)
			for i := range fds {
				if fds[i], err = os.Open(path); err != nil {
					b.Fatal(err)
				}
				defer fds[i].Close()
			}
			runConcurrentOps(b, conc, "sync", func(w int, n uint64) error {
				// One page per sync, each goroutine in pages of its own.
				m[(int(n)*4096)%size] = byte(n)
				return unix.Fdatasync(int(fds[w].Fd()))
			})
		})
	}
}
