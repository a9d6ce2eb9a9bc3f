package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// Snapshot is what a store holds, read in one View through the store.Tx
// interface: the store-wide indexes and, for each workspace asked for,
// everything indexed under it. Two snapshots compared with Diff show what an
// operation changed, or prove that a refused one changed nothing.
//
// Lists whose order the store.Tx contract leaves open (ListWorkspaces,
// PendingHandoffs("")) are sorted by ID; the others keep the store's order.
type Snapshot struct {
	// Workspaces is ListWorkspaces, sorted by ID.
	Workspaces []store.Workspace
	// Pending is PendingHandoffs(""), sorted by ID.
	Pending []store.Handoff
	// Queued is QueuedContinuations.
	Queued []store.Continuation
	// Due is DueWakeups with a now at the end of time and no limit: every
	// pending wakeup.
	Due []store.Wakeup
	// Live is LiveLaunches of every workspace.
	Live []store.Launch
	// ByWorkspace has one entry per workspace id given to TakeSnapshot,
	// whether or not a Workspace record exists under it.
	ByWorkspace map[baton.WorkspaceID]WorkspaceSnapshot
}

// WorkspaceSnapshot is everything indexed under one workspace id.
type WorkspaceSnapshot struct {
	Workspace     *store.Workspace   // GetWorkspace; nil if not found
	Reservation   *store.Reservation // GetReservation; nil if not found
	Pending       *store.Handoff     // PendingHandoffs(ws); nil if the slot is free
	Sessions      []store.Session    // ListSessions
	Handoffs      []store.Handoff    // ListHandoffs
	Wakeups       []store.Wakeup     // ListWakeups
	Continuations []store.Continuation
	Live          []store.Launch      // LiveLaunches
	Instructions  []store.Instruction // ListInstructions
	Changes       []store.Change      // the whole change feed
	LastSeq       int64               // LastSeq
}

// endOfTime is later than any wakeup the suite or baton schedules, and still
// a valid timestamp for every backend.
var endOfTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// TakeSnapshot reads s in one View and returns the store-wide indexes and
// what is indexed under each of ws. It returns the first error of a Tx
// method other than store.ErrNotFound from a getter, wrapped with the
// method's name, or the error of View itself.
func TakeSnapshot(ctx context.Context, s store.Store, ws ...baton.WorkspaceID) (Snapshot, error) {
	var snap Snapshot
	err := s.View(ctx, func(tx store.Tx) error {
		snap = Snapshot{ByWorkspace: make(map[baton.WorkspaceID]WorkspaceSnapshot, len(ws))}
		var err error
		if snap.Workspaces, err = tx.ListWorkspaces(); err != nil {
			return fmt.Errorf("ListWorkspaces: %w", err)
		}
		slices.SortFunc(snap.Workspaces, func(a, b store.Workspace) int { return cmp.Compare(a.ID, b.ID) })
		if snap.Pending, err = tx.PendingHandoffs(""); err != nil {
			return fmt.Errorf("PendingHandoffs(\"\"): %w", err)
		}
		slices.SortFunc(snap.Pending, func(a, b store.Handoff) int { return cmp.Compare(a.ID, b.ID) })
		if snap.Queued, err = tx.QueuedContinuations(); err != nil {
			return fmt.Errorf("QueuedContinuations: %w", err)
		}
		if snap.Due, err = tx.DueWakeups(endOfTime, 0); err != nil {
			return fmt.Errorf("DueWakeups: %w", err)
		}
		if snap.Live, err = tx.LiveLaunches(""); err != nil {
			return fmt.Errorf("LiveLaunches: %w", err)
		}
		for _, id := range ws {
			w, err := snapshotWorkspace(tx, id)
			if err != nil {
				return err
			}
			snap.ByWorkspace[id] = w
		}
		return nil
	})
	if err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

func snapshotWorkspace(tx store.Tx, id baton.WorkspaceID) (WorkspaceSnapshot, error) {
	var w WorkspaceSnapshot
	var err error
	if w.Workspace, err = optional(tx.GetWorkspace(id)); err != nil {
		return w, fmt.Errorf("GetWorkspace: %w", err)
	}
	if w.Reservation, err = optional(tx.GetReservation(id)); err != nil {
		return w, fmt.Errorf("GetReservation: %w", err)
	}
	if w.Pending, err = optional(pendingOf(tx, id)); err != nil {
		return w, fmt.Errorf("PendingHandoffs: %w", err)
	}
	if w.Sessions, err = tx.ListSessions(id); err != nil {
		return w, fmt.Errorf("ListSessions: %w", err)
	}
	if w.Handoffs, err = tx.ListHandoffs(id); err != nil {
		return w, fmt.Errorf("ListHandoffs: %w", err)
	}
	if w.Wakeups, err = tx.ListWakeups(id, ""); err != nil {
		return w, fmt.Errorf("ListWakeups: %w", err)
	}
	if w.Continuations, err = tx.ListContinuations(id); err != nil {
		return w, fmt.Errorf("ListContinuations: %w", err)
	}
	if w.Live, err = tx.LiveLaunches(id); err != nil {
		return w, fmt.Errorf("LiveLaunches: %w", err)
	}
	if w.Instructions, err = tx.ListInstructions(id); err != nil {
		return w, fmt.Errorf("ListInstructions: %w", err)
	}
	if w.Changes, err = tx.Changes(id, 0, 0); err != nil {
		return w, fmt.Errorf("Changes: %w", err)
	}
	if w.LastSeq, err = tx.LastSeq(id); err != nil {
		return w, fmt.Errorf("LastSeq: %w", err)
	}
	return w, nil
}

// optional turns a getter's ErrNotFound into a nil record.
func optional[R any](r R, err error) (*R, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}
