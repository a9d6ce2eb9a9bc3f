package handofftest_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff/handofftest"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/transcript"
)

// plantedBug is a realistic bug planted in the code under test, through a
// seam wrapper (store, engine) or a mutation of the source, to prove the
// harness catches it.
type plantedBug struct {
	name   string
	family string
	how    string // "store wrapper", "engine wrapper" or "mutation"
	// wrap plants a wrapper bug in the harness's configuration.
	wrap func(*handofftest.Config)
	// edits plant a mutation (planted_mutations_test.go).
	edits []edit
	// badger runs the harness on badgerstore (a fresh directory per
	// sequence) instead of memstore.
	badger bool
	// nodes, when set, is how many nodes the harness runs.
	nodes int
}

// plantedBugs is the whole set: the wrapper bugs below, and the mutations.
func plantedBugs() []plantedBug { return append(wrapperBugs(), mutationBugs()...) }

func wrapperBugs() []plantedBug {
	return []plantedBug{
		{name: "EpochNotRaised", family: "fencing", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, putReservation: func(r store.Reservation) error {
				if old, err := tx.GetReservation(r.Workspace); err == nil && r.Held && r.Epoch > old.Epoch {
					r.Epoch = old.Epoch // a take that forgets to raise the fencing epoch
				}
				return tx.PutReservation(r)
			}}
		})},
		{name: "LeaseNeverRenewed", family: "fencing", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, putReservation: func(r store.Reservation) error {
				if old, err := tx.GetReservation(r.Workspace); err == nil && old.Held && r.Held && old.Epoch == r.Epoch {
					r.LeaseExpires = old.LeaseExpires // renewals write nothing
				}
				return tx.PutReservation(r)
			}}
		})},
		{name: "ReleaseOnFailure", family: "fencing", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, putHandoff: func(h store.Handoff) error {
				if h.State == store.StateFailed {
					if r, err := tx.GetReservation(h.Workspace); err == nil && r.Held {
						r.Held = false
						if err := tx.PutReservation(r); err != nil {
							return err
						}
					}
				}
				return tx.PutHandoff(h)
			}}
		})},
		{name: "RebindOnFailure", family: "sessions", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, putHandoff: func(h store.Handoff) error {
				if h.State == store.StateFailed && h.SourceSession != "" && h.TargetSession != "" {
					ws, err := tx.ListWakeups(h.Workspace, h.SourceSession)
					if err != nil {
						return err
					}
					for _, w := range ws {
						if w.Status == store.WakeupPending {
							w.Session = h.TargetSession
							if err := tx.PutWakeup(w); err != nil {
								return err
							}
						}
					}
				}
				return tx.PutHandoff(h)
			}}
		})},
		{name: "NoRestoreConfig", family: "sessions", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, putHandoff: func(h store.Handoff) error {
				if h.State == store.StateFailed || h.State == store.StateInterrupted || h.State == store.StateCancelled {
					if ws, err := tx.GetWorkspace(h.Workspace); err == nil && h.TargetSession != "" {
						ws.Config = h.TargetConfig // the workspace stays on the target's configuration
						if err := tx.PutWorkspace(ws); err != nil {
							return err
						}
					}
				}
				return tx.PutHandoff(h)
			}}
		})},
		{name: "CounterNotAdvancing", family: "sessions", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, putWorkspace: func(w store.Workspace) error {
				if old, err := tx.GetWorkspace(w.ID); err == nil && w.ActivationCounter > old.ActivationCounter && old.ActivationCounter > 0 {
					w.ActivationCounter = old.ActivationCounter // the activation counter does not advance
				}
				return tx.PutWorkspace(w)
			}}
		})},
		{name: "ArchiveNotRefused", family: "sessions", how: "store wrapper", wrap: storeBug(func(tx store.Tx) store.Tx {
			return hookTx{Tx: tx, getWorkspace: func(id baton.WorkspaceID) (store.Workspace, error) {
				w, err := tx.GetWorkspace(id)
				w.Archived = false // archived workspaces are not refused
				return w, err
			}, putWorkspace: func(w store.Workspace) error {
				if old, err := tx.GetWorkspace(w.ID); err == nil && old.Archived {
					w.Archived = true // ...and stay archived when written back
				}
				return tx.PutWorkspace(w)
			}}
		})},
		{name: "ReportTurnFresh", family: "launch shape", how: "engine wrapper", wrap: engineBug(func(req engine.StartRequest) engine.StartRequest {
			if req.Turn == transcript.ReportOnly {
				req.Mode, req.NativeID = engine.Fresh, "" // the report-only turn does not resume the source
			}
			return req
		})},
		{name: "TargetOnSourceConfig", family: "launch shape", how: "engine wrapper", wrap: engineBug(func(req engine.StartRequest) engine.StartRequest {
			if req.Attempt > 0 && req.Turn == transcript.Normal && req.Config.Model != "" {
				req.Config.Model += "-previous" // the target launched on another configuration than asked
			}
			return req
		})},
		{name: "OwnerTokenDropped", family: "fencing", how: "engine wrapper", wrap: engineBug(func(req engine.StartRequest) engine.StartRequest {
			req.Owner = baton.Token{} // launches do not carry the owner token
			return req
		})},
		{name: "TargetNoDir", family: "launch shape", how: "engine wrapper", wrap: engineBug(func(req engine.StartRequest) engine.StartRequest {
			if req.Attempt > 0 {
				req.Dir = "" // the target runs outside the workspace
			}
			return req
		})},
	}
}

func storeBug(hook func(store.Tx) store.Tx) func(*handofftest.Config) {
	return func(c *handofftest.Config) {
		c.WrapStore = func(s store.Store) store.Store { return hookStore{Store: s, hook: hook} }
	}
}

func engineBug(rewrite func(engine.StartRequest) engine.StartRequest) func(*handofftest.Config) {
	return func(c *handofftest.Config) {
		c.WrapEngine = func(e engine.Engine) engine.Engine { return rewriteEngine{Engine: e, rewrite: rewrite} }
	}
}

// hookStore hands every transaction through hook.
type hookStore struct {
	store.Store
	hook func(store.Tx) store.Tx
}

func (s hookStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(s.hook(tx)) })
}

func (s hookStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(s.hook(tx)) })
}

// hookTx overrides the methods a bug changes.
type hookTx struct {
	store.Tx
	putReservation func(store.Reservation) error
	putHandoff     func(store.Handoff) error
	putWorkspace   func(store.Workspace) error
	getWorkspace   func(baton.WorkspaceID) (store.Workspace, error)
}

func (t hookTx) PutReservation(r store.Reservation) error {
	if t.putReservation != nil {
		return t.putReservation(r)
	}
	return t.Tx.PutReservation(r)
}

func (t hookTx) PutHandoff(h store.Handoff) error {
	if t.putHandoff != nil {
		return t.putHandoff(h)
	}
	return t.Tx.PutHandoff(h)
}

func (t hookTx) PutWorkspace(w store.Workspace) error {
	if t.putWorkspace != nil {
		return t.putWorkspace(w)
	}
	return t.Tx.PutWorkspace(w)
}

func (t hookTx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	if t.getWorkspace != nil {
		return t.getWorkspace(id)
	}
	return t.Tx.GetWorkspace(id)
}

// rewriteEngine changes every start request on its way to the engine.
type rewriteEngine struct {
	engine.Engine
	rewrite func(engine.StartRequest) engine.StartRequest
}

func (e rewriteEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	return e.Engine.Start(ctx, e.rewrite(req))
}

func (e rewriteEngine) Validate(cfg baton.EngineConfig) error {
	if v, ok := e.Engine.(engine.Validator); ok {
		return v.Validate(cfg)
	}
	return nil
}

func (e rewriteEngine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	if r, ok := e.Engine.(engine.Reaper); ok {
		return r.ReapLaunch(ctx, id)
	}
	return engine.Failed, errors.New("cannot reap")
}

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
func (r *recorder) Error(args ...any)            { r.Fail(); r.write(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(f string, args ...any) { r.Errorf(f, args...) }
func (r *recorder) Fatal(args ...any)            { r.Error(args...) }
func (r *recorder) FailNow()                     { r.Fail() }
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

var (
	failedAfter       = regexp.MustCompile(`failed after (\d+) tests: (.*)`)
	originalTraceback = regexp.MustCompile(`Original traceback \((.*)`)
	invariantN        = regexp.MustCompile(`^(?:not at rest after \S+ )?(invariant [0-9/]+)`)
)

// catch runs the harness against bug once and returns how many sequences
// it took to catch it and the first line of the failure ("" when it got
// away).
func catch(t *testing.T, bug plantedBug) (int, string) {
	t.Helper()
	cfg := handofftest.Config{Wait: time.Second, Nodes: bug.nodes}
	if bug.wrap != nil {
		bug.wrap(&cfg)
	}
	if bug.badger {
		base := t.TempDir()
		cfg.NewStore = func() (store.Store, func(), error) {
			dir, err := os.MkdirTemp(base, "seq-")
			if err != nil {
				return nil, nil, err
			}
			s, err := badgerstore.Open(dir, badgerstore.Options{Small: true, NoSync: true})
			if err != nil {
				return nil, nil, err
			}
			return s, func() { _ = s.Close(); _ = os.RemoveAll(dir) }, nil
		}
	}
	r := &recorder{name: "planted-" + bug.name}
	// Count the sequences up to the first that fails: rapid's own count is
	// not printed when a failure does not replay (a race it caught once).
	prop := handofftest.Check(cfg)
	calls, first := 0, 0
	rapid.Check(r, func(t *rapid.T) {
		calls++
		defer func() {
			if p := recover(); p != nil {
				if first == 0 {
					first = calls
				}
				panic(p)
			}
		}()
		prop(t)
	})
	if !r.Failed() {
		return 0, ""
	}
	out := r.log.String()
	why := firstLine(out)
	if m := failedAfter.FindStringSubmatch(out); m != nil {
		why = m[2]
	} else if m := originalTraceback.FindStringSubmatch(out); m != nil {
		why = m[1]
	}
	return first, why
}

// TestHarnessCatchesPlantedBugs proves the harness has teeth: against each
// planted bug it must report a failure. The wrapper bugs run in this
// process; each mutation is a build of its own (see catchMutation), run
// only when BATON_PLANTED_MUTATIONS is set (CI sets it): they cost a
// compilation each.
//
// PLANTED_TABLE=5 makes it catch each bug that many times and print the
// documentation's table (sequences to catch, median, and the check that
// caught it); it is not run in CI.
func TestHarnessCatchesPlantedBugs(t *testing.T) {
	plantedFlags(t)
	runs, _ := strconv.Atoi(os.Getenv("PLANTED_TABLE"))
	mutations := os.Getenv("BATON_PLANTED_MUTATIONS") != ""
	var (
		mu    sync.Mutex
		table = map[string]string{}
	)
	for _, bug := range plantedBugs() {
		t.Run(bug.name, func(t *testing.T) {
			var ns []int
			var whys []string
			if bug.edits != nil {
				if !mutations {
					t.Skip("a mutation: set BATON_PLANTED_MUTATIONS=1 to build and run it")
				}
				t.Parallel()
				ns, whys = catchMutation(t, bug, max(runs, 1))
			} else {
				for range max(runs, 1) {
					n, first := catch(t, bug)
					if first == "" {
						t.Fatalf("the harness did not catch %s (%s, %s)", bug.name, bug.family, bug.how)
					}
					ns, whys = append(ns, n), append(whys, first)
				}
			}
			by := map[string]int{}
			for _, why := range whys {
				by[checkOf(why)]++
			}
			t.Logf("caught %s after %v sequences: %s", bug.name, ns, whys[len(whys)-1])
			slices.Sort(ns)
			if runs > 0 {
				mu.Lock()
				table[bug.name] = fmt.Sprintf("| %s | %s | %s | %d | %s |", bug.name, bug.family, bug.how, ns[len(ns)/2], mostOf(by))
				mu.Unlock()
			}
		})
	}
	if runs > 0 {
		t.Cleanup(func() { // after the parallel subtests
			var rows []string
			for _, bug := range plantedBugs() {
				if row, ok := table[bug.name]; ok {
					rows = append(rows, row)
				}
			}
			fmt.Printf("| planted bug | family | planted through | sequences to catch (median of %d) | caught by |\n|---|---|---|---|---|\n%s\n",
				runs, strings.Join(rows, "\n"))
		})
	}
}

// plantedFlags sets rapid's flags for catching planted bugs.
func plantedFlags(t *testing.T) {
	t.Helper()
	setFlag(t, "rapid.nofailfile", "true")
	// A caught bug is all this test needs: do not spend long shrinking it.
	setFlag(t, "rapid.shrinktime", "1ms")
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
		setFlag(t, "rapid.checks", "2000") // a bound, not a cost: each run stops at its first failure
	}
}

// checkOf names the check a failure message comes from.
func checkOf(msg string) string {
	switch {
	case strings.Contains(msg, "(unconfirmed reap)"):
		return "invariant 2 (unconfirmed reap)"
	case invariantN.MatchString(msg):
		return invariantN.FindStringSubmatch(msg)[1]
	case strings.Contains(msg, "recorded running") || strings.Contains(msg, "its row says"):
		return "invariant 2 (rows and processes)"
	case strings.Contains(msg, "instruction queue") || strings.Contains(msg, "instruction while") || strings.Contains(msg, "message while") ||
		strings.Contains(msg, "message in an archived") || strings.Contains(msg, "delivered instruction") || strings.Contains(msg, "cancelled instruction"):
		return "invariant 10"
	case strings.HasPrefix(msg, "late report") || strings.Contains(msg, "while reserved"):
		return "refusal reason"
	case strings.Contains(msg, "came due while"):
		return "invariant 8 (deferred wakeups)"
	case strings.Contains(msg, "fingerprint mismatch"):
		return "invariant 6"
	case strings.Contains(msg, "lease not renewed"):
		return "lease renewal"
	case strings.Contains(msg, "not carried out"):
		return "stop carried out"
	case strings.Contains(msg, ", model ") || strings.HasPrefix(msg, "model"):
		return "model state"
	}
	return "request outcome"
}

// mostOf returns the most frequent key (ties: the first in order).
func mostOf(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	best := keys[0]
	for _, k := range keys {
		if m[k] > m[best] {
			best = k
		}
	}
	return best
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
