package badgerstore

import (
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// Records are stored as the JSON of the store types (their tags are the
// format), times in UTC. The records listed in insert order carry their
// insert number in the workspace beside them, which is not part of the
// store type. A row is kept in the store's cache and shared by its readers:
// its slices are copied on the way in (toX) and out (record), never
// written through.

type workspaceRow struct{ store.Workspace }

func toWorkspace(w store.Workspace) workspaceRow {
	return workspaceRow{records.Workspace(w, records.UTC)}
}

func (w workspaceRow) record() store.Workspace {
	w.Running = records.Clone(w.Running)
	return w.Workspace
}

type sessionRow struct{ store.Session }

func toSession(s store.Session) sessionRow { return sessionRow{records.Session(s, records.UTC)} }
func (s sessionRow) record() store.Session { return s.Session }

// insertSeq is the record's insert number in its workspace (see
// currentSeq), for the records listed in insert order.
func (s sessionRow) insertSeq() uint64 { return uint64(s.Seq) }

type handoffRow struct {
	store.Handoff
	Seq uint64 `json:"seq"`
}

func toHandoff(h store.Handoff, seq uint64) handoffRow {
	return handoffRow{records.Handoff(h, records.UTC), seq}
}

func (h handoffRow) record() store.Handoff {
	h.History = records.Clone(h.History)
	return h.Handoff
}

func (h handoffRow) insertSeq() uint64 { return h.Seq }

type reservationRow struct{ store.Reservation }

func toReservation(r store.Reservation) reservationRow {
	return reservationRow{records.Reservation(r, records.UTC)}
}

func (r reservationRow) record() store.Reservation { return r.Reservation }

type wakeupRow struct{ store.Wakeup }

func toWakeup(w store.Wakeup) wakeupRow  { return wakeupRow{records.Wakeup(w, records.UTC)} }
func (w wakeupRow) record() store.Wakeup { return w.Wakeup }

type continuationRow struct {
	store.Continuation
	Seq uint64 `json:"seq"`
}

func toContinuation(c store.Continuation, seq uint64) continuationRow {
	return continuationRow{records.Continuation(c, records.UTC), seq}
}

func (c continuationRow) record() store.Continuation { return c.Continuation }

func (c continuationRow) insertSeq() uint64 { return c.Seq }

type launchRow struct {
	store.Launch
	Seq uint64 `json:"seq"`
}

func toLaunch(l store.Launch, seq uint64) launchRow {
	return launchRow{records.Launch(l, records.UTC), seq}
}

func (l launchRow) record() store.Launch { return l.Launch }

func (l launchRow) insertSeq() uint64 { return l.Seq }

type instructionRow struct {
	store.Instruction
	Seq uint64 `json:"seq"`
}

func toInstruction(i store.Instruction, seq uint64) instructionRow {
	return instructionRow{records.Instruction(i, records.UTC), seq}
}

func (i instructionRow) record() store.Instruction { return i.Instruction }

func (i instructionRow) insertSeq() uint64 { return i.Seq }
