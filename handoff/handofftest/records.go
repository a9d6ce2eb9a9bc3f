package handofftest

import (
	"fmt"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// checkLaunchRecords: invariant 2's launch records. The live launches of a
// workspace (store.Tx.LiveLaunches(ws)) are exactly the live records of
// the store's whole list (LiveLaunches("")) that belong to it, none of
// them gone; and a record held by a node that runs, of a handoff that no
// longer runs the attempt it was recorded for, is closed unless the
// process it was for still runs or its node is launching it: an attempt
// that settles closes the records of its own launches that it never
// spawned (another node's stay live until a reap confirms them gone).
func (h *harness) checkLaunchRecords() {
	var all []store.Launch
	by := map[baton.WorkspaceID][]store.Launch{}
	err := h.raw.View(h.ctx, func(tx store.Tx) (err error) {
		if all, err = tx.LiveLaunches(""); err != nil {
			return err
		}
		for _, ws := range h.wss {
			if by[ws], err = tx.LiveLaunches(ws); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		h.fatalf("launches: %v", err)
	}
	ids := func(ls []store.Launch) []baton.LaunchID {
		var out []baton.LaunchID
		for _, l := range ls {
			out = append(out, l.ID)
		}
		slices.Sort(out)
		return out
	}
	for _, ws := range h.wss {
		var want []store.Launch
		for _, l := range all {
			if l.Workspace == ws {
				want = append(want, l)
			}
		}
		for _, l := range by[ws] {
			if l.Gone || l.Workspace != ws {
				h.fatalf("invariant 2 (launch records): LiveLaunches(%s) lists launch %s of %s, gone %t:\n%s", ws, l.ID, l.Workspace, l.Gone, launchTable(by[ws]))
			}
		}
		if got, want := ids(by[ws]), ids(want); !slices.Equal(got, want) {
			h.fatalf("invariant 2 (launch records): LiveLaunches(%s) = %v, but the store's whole list has %v live there", ws, got, want)
		}
	}
	if why := h.unspawnedLeftLive(all); why != "" {
		h.fatalf("%s", why)
	}
}

// unspawnedLeftLive names a live record of a transfer's launch that the
// life that recorded it never spawned, although that life took the
// attempt it was recorded for (and so settled it: a takeover makes another
// node the taker) and the attempt has settled: every path that spawns
// nothing closes the record, and an attempt that settles closes those of
// its own launches it did not make. A record another node or life made
// stays live until a reap confirms it gone.
func (h *harness) unspawnedLeftLive(all []store.Launch) string {
	spawned := map[baton.LaunchID]bool{}
	for _, l := range h.eng.Launches() {
		if l.Req.LaunchID != "" {
			spawned[l.Req.LaunchID] = true
		}
	}
	for _, l := range all {
		if l.Handoff == "" || spawned[l.ID] {
			continue
		}
		m := h.hs[l.Handoff]
		if m == nil || m.uncertain || m.attempt != l.Attempt || activeState(m.state) || m.takenBy == nil {
			continue
		}
		h.mu.Lock()
		rec, known := h.recorded[l.ID]
		h.mu.Unlock()
		if !known || rec.node != m.takenBy.idx || rec.life != m.takenLife || m.takenBy.life != rec.life || m.takenBy.gate.get() != nodeUp {
			continue
		}
		return fmt.Sprintf("invariant 2 (launch records): launch %s of handoff %s (attempt %d, now %s) recorded by %s (life %d), which took the attempt, was never spawned, yet its record is still live",
			l.ID, l.Handoff, l.Attempt, m.state, l.Holder, rec.life)
	}
	return ""
}
