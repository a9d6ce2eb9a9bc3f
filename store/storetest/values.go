package storetest

import (
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var valueTests = []testCase{
	{"FullRecordsRoundTrip", testFullRecordsRoundTrip},
	{"ZeroTimesRoundTrip", testZeroTimesRoundTrip},
	{"ReservationRoundTrip", testReservationRoundTrip},
	{"RecordsAreValues", testRecordsAreValues},
	{"WorkspaceIsAValue", testWorkspaceIsAValue},
}

// testWorkspaceIsAValue: a workspace's Running slice is the caller's own,
// as given to PutWorkspace and as read, inside the Update and after it.
func testWorkspaceIsAValue(t *testing.T, s store.Store) {
	want := fullWorkspace()
	in := fullWorkspace()
	scribble := func(w *store.Workspace) {
		w.Name = "scribbled"
		if len(w.Running) > 0 {
			w.Running[0] = "scribbled"
		}
		w.Running = append(w.Running, "appended")
	}
	Update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(in); err != nil {
			return err
		}
		scribble(&in)
		got, err := tx.GetWorkspace(want.ID)
		if err != nil {
			return err
		}
		scribble(&got)
		got, err = tx.GetWorkspace(want.ID)
		if err != nil {
			return err
		}
		diff(t, "workspace in the inserting Update, after scribbling on the inserted and the read record", want, got)
		put := fullWorkspace()
		if err := tx.PutWorkspace(put); err != nil {
			return err
		}
		scribble(&put)
		got, err = tx.GetWorkspace(want.ID)
		if err != nil {
			return err
		}
		diff(t, "workspace after scribbling on the record given to PutWorkspace", want, got)
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		got, err := tx.GetWorkspace(want.ID)
		if err != nil {
			return err
		}
		scribble(&got)
		got, err = tx.GetWorkspace(want.ID)
		diff(t, "stored workspace after scribbling on a read one", want, got)
		return err
	})
}

// fixedZone is a location other than UTC and Local; a backend may return
// times in another location, but the same instant.
var fixedZone = time.FixedZone("UTC+05:30", 5*3600+30*60)

// zt returns at(i) in fixedZone.
func zt(i int) time.Time { return at(i).In(fixedZone) }

var fullConfig = baton.EngineConfig{Engine: "claude", Model: "opus", ReasoningEffort: "high", PermissionMode: "plan", Account: "team"}

// Records with every field set, so that a backend which forgets one fails.
func fullWorkspace() store.Workspace {
	return store.Workspace{
		ID: "ws-full", Name: "Full", Mission: "ship it", Root: "/srv/ws-full", Share: baton.ShareReport, Config: fullConfig,
		CurrentSession: "s-full", ActivationCounter: 42, Running: []baton.SessionID{"s-run-1", "s-run-2"},
		RankHead: "s-head", Ranked: true, Archived: true, CreatedAt: zt(1), UpdatedAt: zt(2),
		Pressure: store.PressurePolicy{Threshold: 0.75, Target: baton.EngineConfig{Engine: "codex", Model: "gpt"}, Report: true},
	}
}

func fullSession() store.Session {
	return store.Session{
		ID: "s-full", Workspace: "ws-full", Config: fullConfig, NativeID: "native-1", ActualModel: "opus-4-8",
		EngineVersion: "2.1.197", Status: store.SessionEnded,
		ActivationOrder: -1, StartedAt: zt(3), EndedAt: zt(4), EndReason: "rolled back", CreatedAt: zt(5),
		RankAbove: "s-above", RankBelow: "s-below", Usage: store.Usage{Tokens: 150000, Window: 200000, Launch: "launch-full"},
		Pressure: store.PressureFired,
	}
}

func fullHandoff() store.Handoff {
	return store.Handoff{
		ID: "h-full", Workspace: "ws-full", RequestID: "r-full", Fingerprint: "sha256:abc", State: store.StateFailed,
		Attempt: 3, SourceSession: "s-full", TargetSession: "s-target", SourceConfig: fullConfig,
		TargetConfig: baton.EngineConfig{Engine: "codex", Model: "gpt", Account: "other"}, GenerateSummary: true,
		Native: true, Share: baton.ShareNone, Report: "what happened\nand what is next", ReportPath: "/srv/ws-full/handoff.md",
		Facts:           "- branch: main\n- tests: passed",
		GenerationToken: baton.ParseToken("generation token").Hash(), GenerationDeadline: zt(6), Error: "target failed",
		StopRequested: true, StopUnconfirmed: true,
		History: []store.AttemptRecord{
			{Attempt: 1, TargetSession: "s-t1", Outcome: store.StateFailed, Error: "spawn", EndedAt: zt(7)},
			{Attempt: 2, TargetSession: "s-t2", Outcome: store.StateInterrupted, EndedAt: zt(8)},
		},
		CreatedAt: zt(9), UpdatedAt: zt(10),
		Reason: store.HandoffReason{Trigger: store.TriggerContextPressure, Tokens: 170000, Window: 200000, Threshold: 0.8},
	}
}

func fullReservation() store.Reservation {
	return store.Reservation{
		Workspace: "ws-full", Held: true, Handoff: "h-full", Owner: baton.ParseToken("owner token").Hash(), Epoch: 9,
		LeaseHolder: "node-1/pid-7", LeaseExpires: zt(11), LeaseStore: "incarnation-1", UpdatedAt: zt(12),
	}
}

func fullWakeup() store.Wakeup {
	return store.Wakeup{
		ID: "w-full", Workspace: "ws-full", Session: "s-full", Prompt: "check the build", At: zt(13),
		Status: store.WakeupCancelled, Reason: "nothing to resume", CreatedAt: zt(14), UpdatedAt: zt(15),
	}
}

func fullContinuation() store.Continuation {
	return store.Continuation{
		ID: "c-full", Workspace: "ws-full", Session: "s-full", Task: "fix the bug", Ending: "context limit",
		Prompt: "continue", Target: fullConfig, Automated: true, State: store.ContinuationRefused,
		Reason: "account switched", CreatedAt: zt(16), UpdatedAt: zt(17),
	}
}

func fullLaunch() store.Launch {
	return store.Launch{
		ID: "l-full", Workspace: "ws-full", Session: "s-full", Handoff: "h-full", Attempt: 3, Holder: "node-1/pid-7",
		Host: "host-1", Engine: "claude", Epoch: 9, Gone: true, Admitted: true, EndReason: "reaped", CreatedAt: zt(18), UpdatedAt: zt(19),
	}
}

func fullInstruction() store.Instruction {
	return store.Instruction{
		ID: "i-full", Workspace: "ws-full", Text: "also update the docs", State: store.InstructionDelivered,
		Session: "s-full", CreatedAt: zt(20), UpdatedAt: zt(21),
	}
}

// records is one of each kind, as read back from a store.
type records struct {
	Workspace    store.Workspace
	Session      store.Session
	Handoff      store.Handoff
	Reservation  store.Reservation
	Wakeup       store.Wakeup
	Continuation store.Continuation
	Launch       store.Launch
	Instruction  store.Instruction
}

func (r *records) insert(tx store.Tx) (err error) {
	if err = tx.PutWorkspace(r.Workspace); err != nil {
		return err
	}
	if r.Session, err = putSession(tx, r.Session); err != nil {
		return err
	}
	if err = tx.PutHandoff(r.Handoff); err != nil {
		return err
	}
	if err = tx.PutReservation(r.Reservation); err != nil {
		return err
	}
	if err = tx.PutWakeup(r.Wakeup); err != nil {
		return err
	}
	if err = tx.PutContinuation(r.Continuation); err != nil {
		return err
	}
	if err = tx.PutLaunch(r.Launch); err != nil {
		return err
	}
	return tx.PutInstruction(r.Instruction)
}

func (r *records) read(tx store.Tx) (got records, err error) {
	if got.Workspace, err = tx.GetWorkspace(r.Workspace.ID); err != nil {
		return got, err
	}
	if got.Session, err = tx.GetSession(r.Session.ID); err != nil {
		return got, err
	}
	if got.Handoff, err = tx.GetHandoff(r.Handoff.ID); err != nil {
		return got, err
	}
	if got.Reservation, err = tx.GetReservation(r.Reservation.Workspace); err != nil {
		return got, err
	}
	if got.Wakeup, err = tx.GetWakeup(r.Wakeup.ID); err != nil {
		return got, err
	}
	if got.Continuation, err = tx.GetContinuation(r.Continuation.ID); err != nil {
		return got, err
	}
	if got.Launch, err = tx.GetLaunch(r.Launch.ID); err != nil {
		return got, err
	}
	got.Instruction, err = tx.GetInstruction(r.Instruction.ID)
	return got, err
}

// roundTrip stores want, checks what reads back and returns want with the
// Session.Seq the store gave.
func roundTrip(t *testing.T, s store.Store, want records) records {
	t.Helper()
	Update(t, s, want.insert) // sets want.Session.Seq
	View(t, s, func(tx store.Tx) error {
		got, err := want.read(tx)
		if err != nil {
			return err
		}
		diff(t, "records read back", want, got)
		return nil
	})
	return want
}

func testFullRecordsRoundTrip(t *testing.T, s store.Store) {
	want := records{fullWorkspace(), fullSession(), fullHandoff(), fullReservation(), fullWakeup(), fullContinuation(),
		fullLaunch(), fullInstruction()}
	want = roundTrip(t, s, want)
	// The feed carries the same full records.
	View(t, s, func(tx store.Tx) error {
		got, err := tx.Changes(want.Workspace.ID, 0, 0)
		if err != nil {
			return err
		}
		byKind := map[string]store.Change{}
		for _, c := range got {
			c.Seq = 0
			byKind[kindOf(c)] = c
		}
		for _, rec := range []any{want.Session, want.Handoff, want.Instruction} {
			w := change(rec)
			diff(t, "the "+kindOf(w)+" change of a full record (Seq ignored)", w, byKind[kindOf(w)])
		}
		return nil
	})
}

func testZeroTimesRoundTrip(t *testing.T, s store.Store) {
	want := records{
		Workspace:    store.Workspace{ID: "ws-z"},
		Session:      store.Session{ID: "s-z", Workspace: "ws-z"},
		Handoff:      store.Handoff{ID: "h-z", Workspace: "ws-z", RequestID: "r-z", History: []store.AttemptRecord{{Attempt: 1}}},
		Reservation:  store.Reservation{Workspace: "ws-z"},
		Wakeup:       store.Wakeup{ID: "w-z", Workspace: "ws-z"},
		Continuation: store.Continuation{ID: "c-z", Workspace: "ws-z"},
		Launch:       store.Launch{ID: "l-z", Workspace: "ws-z"},
		Instruction:  store.Instruction{ID: "i-z", Workspace: "ws-z"},
	}
	roundTrip(t, s, want)
	View(t, s, func(tx store.Tx) error {
		got, err := want.read(tx)
		if err != nil {
			return err
		}
		for name, tm := range map[string]time.Time{
			"Workspace.CreatedAt": got.Workspace.CreatedAt, "Session.StartedAt": got.Session.StartedAt,
			"Session.EndedAt": got.Session.EndedAt, "Handoff.GenerationDeadline": got.Handoff.GenerationDeadline,
			"Handoff.History[0].EndedAt": got.Handoff.History[0].EndedAt, "Reservation.LeaseExpires": got.Reservation.LeaseExpires,
			"Wakeup.At": got.Wakeup.At, "Continuation.UpdatedAt": got.Continuation.UpdatedAt,
			"Launch.CreatedAt": got.Launch.CreatedAt, "Instruction.UpdatedAt": got.Instruction.UpdatedAt,
		} {
			if !tm.IsZero() {
				t.Errorf("%s = %v, want the zero time (IsZero)", name, tm)
			}
		}
		return nil
	})
}

func testReservationRoundTrip(t *testing.T, s store.Store) {
	View(t, s, func(tx store.Tx) error {
		_, err := tx.GetReservation("ws-full")
		wantNotFound(t, "GetReservation before any Put", err)
		return nil
	})
	taken := fullReservation()
	released := taken
	released.Held, released.Handoff, released.Owner, released.LeaseHolder, released.LeaseExpires = false, "", baton.TokenHash{}, "", time.Time{}
	retaken := taken
	retaken.Epoch, retaken.Owner = taken.Epoch+1, baton.ParseToken("another owner").Hash()
	other := store.Reservation{Workspace: "ws-other", Held: true, Epoch: 1}
	for _, r := range []store.Reservation{taken, released, retaken} {
		Update(t, s, func(tx store.Tx) error {
			if err := tx.PutReservation(r); err != nil {
				return err
			}
			got, err := tx.GetReservation(r.Workspace)
			if err != nil {
				return err
			}
			diff(t, "GetReservation in the Update that put it", r, got)
			return tx.PutReservation(other)
		})
		View(t, s, func(tx store.Tx) error {
			got, err := tx.GetReservation(r.Workspace)
			if err != nil {
				return err
			}
			diff(t, "GetReservation", r, got)
			got, err = tx.GetReservation(other.Workspace)
			if err != nil {
				return err
			}
			diff(t, "GetReservation of another workspace", other, got)
			return nil
		})
	}
}

func testRecordsAreValues(t *testing.T, s store.Store) {
	want := fullHandoff()
	want.State = store.StateStopping
	in := fullHandoff()
	in.State = store.StateStopping

	// scribble changes a handoff the way a careless caller would, through
	// its History slice too.
	scribble := func(h *store.Handoff) {
		h.Report = "scribbled"
		if len(h.History) > 0 {
			h.History[0].Error = "scribbled"
		}
		h.History = append(h.History, store.AttemptRecord{Attempt: 99})
	}
	check := func(when string) {
		t.Helper()
		View(t, s, func(tx store.Tx) error {
			got, err := tx.GetHandoff(want.ID)
			if err != nil {
				return err
			}
			diff(t, "stored handoff "+when, want, got)
			return nil
		})
	}

	Update(t, s, func(tx store.Tx) error {
		if err := tx.PutHandoff(in); err != nil {
			return err
		}
		scribble(&in)
		got, err := tx.GetHandoff(want.ID)
		if err != nil {
			return err
		}
		scribble(&got)
		got, err = tx.GetHandoff(want.ID)
		if err != nil {
			return err
		}
		diff(t, "handoff in the inserting Update, after scribbling on the inserted and the read record", want, got)
		return nil
	})
	check("after scribbling on the record given to PutHandoff")

	// Every way out returns a copy.
	View(t, s, func(tx store.Tx) error {
		reads := map[string]func() (store.Handoff, error){
			"GetHandoff":       func() (store.Handoff, error) { return tx.GetHandoff(want.ID) },
			"HandoffByRequest": func() (store.Handoff, error) { return tx.HandoffByRequest(want.Workspace, want.RequestID) },
			"PendingHandoffs":  func() (store.Handoff, error) { return pendingOf(tx, want.Workspace) },
			"ListHandoffs": func() (store.Handoff, error) {
				l, err := tx.ListHandoffs(want.Workspace)
				if err != nil || len(l) != 1 {
					return store.Handoff{}, err
				}
				scribble(&l[0])
				return l[0], nil
			},
			"PendingHandoffs(\"\")": func() (store.Handoff, error) {
				l, err := tx.PendingHandoffs("")
				if err != nil || len(l) != 1 {
					return store.Handoff{}, err
				}
				scribble(&l[0])
				return l[0], nil
			},
		}
		for name, read := range reads {
			got, err := read()
			if err != nil {
				return err
			}
			scribble(&got)
			again, err := tx.GetHandoff(want.ID)
			if err != nil {
				return err
			}
			diff(t, "handoff after scribbling on the result of "+name, want, again)
		}
		return nil
	})

	// Put copies too.
	put := fullHandoff()
	put.State = store.StateGenerating
	want = put
	want.History = append([]store.AttemptRecord(nil), put.History...)
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(put) })
	scribble(&put)
	check("after scribbling on the record given to PutHandoff")
}
