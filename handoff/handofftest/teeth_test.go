package handofftest_test

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/handofftest"
	"github.com/batonhq/baton/handoff/internal/mutant"
)

// recorder is a rapid.TB that records a failure instead of failing the
// test, so a test can assert that the harness fails.
type recorder struct {
	name   string
	mu     sync.Mutex
	failed bool
	log    strings.Builder
}

func (r *recorder) Helper()                    {}
func (r *recorder) Name() string               { return r.name }
func (r *recorder) Logf(f string, args ...any) { r.write(fmt.Sprintf(f, args...)) }
func (r *recorder) Log(args ...any)            { r.write(fmt.Sprint(args...)) }
func (r *recorder) Skipf(string, ...any)       {}
func (r *recorder) Skip(...any)                {}
func (r *recorder) SkipNow()                   {}
func (r *recorder) Errorf(f string, args ...any) {
	r.Fail()
	r.write(fmt.Sprintf(f, args...))
}
func (r *recorder) Error(args ...any) { r.Fail(); r.write(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(f string, args ...any) {
	r.Errorf(f, args...)
}
func (r *recorder) Fatal(args ...any) { r.Error(args...) }
func (r *recorder) FailNow()          { r.Fail() }
func (r *recorder) Fail() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
}
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
func (r *recorder) write(s string) {
	r.mu.Lock()
	r.log.WriteString(s + "\n")
	r.mu.Unlock()
}

// setFlag sets a rapid flag for the duration of the test.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag %s", name)
	}
	old := f.Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set(name, old) })
}

// TestHarnessCatchesPlantedBugs proves the harness has teeth: against a
// Coordinator with each planted bug, it must report a failure.
func TestHarnessCatchesPlantedBugs(t *testing.T) {
	setFlag(t, "rapid.nofailfile", "true")
	// A caught bug is all this test needs: do not spend long shrinking it.
	setFlag(t, "rapid.shrinktime", "1s")
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
		setFlag(t, "rapid.checks", "3000") // a bound, not a cost: each mutant stops at its first failure
	}
	for _, m := range mutant.All {
		t.Run(m.Name, func(t *testing.T) {
			r := &recorder{name: "mutant-" + m.Name}
			rapid.Check(r, handofftest.Check(handofftest.Config{Options: []handoff.Option{handoff.WithMutants(m.Bug)}}))
			if !r.Failed() {
				t.Fatalf("the harness did not catch %s", m.Name)
			}
			out := r.log.String()
			i := strings.Index(out, "[rapid] failed")
			if i < 0 {
				i = 0
			}
			t.Logf("caught %s: %s", m.Name, firstLine(out[i:]))
		})
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
