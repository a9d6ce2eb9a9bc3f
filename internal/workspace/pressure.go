package workspace

import (
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// CheckPressure checks context-pressure policy p: a threshold in [0, 1]
// and, when one is set, a target configuration eng offers. It returns p
// with its target normalized. Errors: baton.ErrInvalid.
func CheckPressure(eng engine.Engine, p store.PressurePolicy) (store.PressurePolicy, error) {
	if !(p.Threshold >= 0 && p.Threshold <= 1) {
		return p, baton.Errorf(baton.ErrInvalid, "pressure threshold %v is outside [0, 1]", p.Threshold)
	}
	p.Target = p.Target.Normalize()
	if p.Target != (baton.EngineConfig{}) {
		if err := CheckConfig(eng, p.Target); err != nil {
			return p, fmt.Errorf("pressure target: %w", err)
		}
	}
	return p, nil
}

// MarkPressure applies the workspace's context-pressure policy
// (store.PressurePolicy) to the turn of launch that ended on session row s
// (its end and usage already set on s, not yet written), in the
// transaction that records the end: when the policy fires, s is marked
// store.PressureDue and MarkPressure reports true. The policy fires when
// the turn ended on its own (the caller does not call it for a stopped
// turn), reported its usage (s.Usage.Launch is launch) against a known
// window, at or above the threshold; s is the workspace's current session,
// still armed (not due or fired already); and nothing holds the workspace
// (no reservation: no transfer pending). blind reports a workspace with a
// policy whose turn reported no usage or no window: the policy cannot fire.
func MarkPressure(tx store.Tx, s *store.Session, launch baton.LaunchID) (due, blind bool, err error) {
	if launch == "" || s.Pressure != store.PressureArmed {
		return false, false, nil
	}
	ws, err := tx.GetWorkspace(s.Workspace)
	if err != nil || ws.Pressure.Threshold <= 0 {
		return false, false, err
	}
	u := s.Usage
	if u.Launch != launch || u.Window <= 0 {
		return false, true, nil
	}
	if !OverThreshold(ws.Pressure, u) || ws.Archived || ws.CurrentSession != s.ID {
		return false, false, nil
	}
	r, err := getReservation(tx, ws.ID)
	if err != nil || r.Held {
		return false, false, err
	}
	s.Pressure = store.PressureDue
	return true, false, nil
}

// OverThreshold reports whether usage u fills its window to policy p's
// threshold or more; false for a policy that is off or a window unknown.
// It compares the fraction of the window in use with the threshold: the
// quotient of two whole numbers is the float64 nearest the exact fraction,
// as the threshold is the float64 nearest the decimal the user wrote, so a
// usage exactly at the threshold (110000 of 200000 at 0.55) reaches it,
// where the product of the threshold and the window can round above the
// tokens.
func OverThreshold(p store.PressurePolicy, u store.Usage) bool {
	return p.Threshold > 0 && u.Window > 0 && float64(u.Tokens)/float64(u.Window) >= p.Threshold
}

// errPressureDue is ErrWorkspaceBusy while the workspace's current
// session is store.PressureDue: a transfer is about to start, and an
// ordinary write (a turn, a queued instruction's delivery) would race it.
var errPressureDue = baton.Errorf(ErrWorkspaceBusy, "a context-pressure transfer is due")

// checkDue refuses an ordinary write while a context-pressure transfer is
// due in workspace id (see MarkPressure). It reads the current session
// only when the workspace has a policy.
func checkDue(tx store.Tx, id baton.WorkspaceID) error {
	ws, err := tx.GetWorkspace(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (ws.Pressure.Threshold <= 0 || ws.CurrentSession == "")) {
		return nil
	}
	if err != nil {
		return err
	}
	s, err := tx.GetSession(ws.CurrentSession)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case s.Pressure == store.PressureDue:
		return errPressureDue
	}
	return nil
}
