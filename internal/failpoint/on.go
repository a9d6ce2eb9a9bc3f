//go:build baton_failpoints

package failpoint

import "sync"

// Enabled is true in a build with the baton_failpoints tag.
const Enabled = true

// points is the process-wide set of armed failpoints. It exists only in a
// failpoint build.
var points = struct {
	mu    sync.Mutex
	armed map[string]int
	hits  map[string]int
}{armed: map[string]int{}, hits: map[string]int{}}

// Hit reports whether the named point is armed. Every call counts as an
// evaluation (see Evaluated), armed or not.
func Hit(name string) bool {
	points.mu.Lock()
	defer points.mu.Unlock()
	points.hits[name]++
	return points.armed[name] > 0
}

// Enable arms the named point and returns the function that disarms it
// (idempotent). Arming a point twice needs two disarms.
func Enable(name string) (disable func()) {
	points.mu.Lock()
	points.armed[name]++
	points.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			points.mu.Lock()
			points.armed[name]--
			points.mu.Unlock()
		})
	}
}

// Evaluated returns how many times the named point's site has been
// evaluated since the process started, armed or not: zero means the site
// was never reached (or does not exist).
func Evaluated(name string) int {
	points.mu.Lock()
	defer points.mu.Unlock()
	return points.hits[name]
}
