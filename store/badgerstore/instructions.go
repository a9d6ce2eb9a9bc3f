package badgerstore

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// instructionIndex is the entry of i in the instructions of its workspace,
// by insert number.
func instructionIndex(i instructionV1) []index {
	l := ownedList(tInstrByWS, string(i.Workspace))
	return []index{{l, l.prefix().u64(i.Seq).str(string(i.ID)), string(i.ID)}}
}

func instructionKeyOf(id string) key { return instructionKey(baton.InstructionID(id)) }

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return getRecord[instructionV1](t, instructionKey(id), "instruction", id)
}

// InsertInstruction adds i and, at commit, a change to its workspace's
// feed. store.ErrDuplicate if its id exists; baton.ErrInvalid if ID or
// Workspace is empty.
func (t *tx) InsertInstruction(i store.Instruction) error {
	if err := t.writable("InsertInstruction"); err != nil {
		return err
	}
	if err := firstErr(required("instruction", "ID", i.ID), required("instruction", "Workspace", i.Workspace)); err != nil {
		return err
	}
	k := instructionKey(i.ID)
	if err := absent(t, k, "instruction", i.ID); err != nil {
		return err
	}
	seq, err := t.peekSeq(tInstrByWS, i.Workspace)
	if err != nil {
		return err
	}
	v := toInstruction(i, seq)
	b, err := encode(v)
	if err != nil {
		return err
	}
	if err := firstErrOf(
		func() error { return t.takeSeq(tInstrByWS, i.Workspace, seq) },
		func() error { return t.setRecord(k, b, v) },
		func() error { return t.reindex(nil, instructionIndex(v)) },
		func() error { return t.moveOpen(nil, v) },
	); err != nil {
		return err
	}
	t.changes.add(changeV1{Workspace: v.Workspace, Kind: store.ChangeInstruction, Instruction: &v}, string(v.ID), b)
	return nil
}

// PutInstruction replaces i, keeping its place in ListInstructions, and
// adds at commit a change to its workspace's feed. store.ErrNotFound if
// absent; baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutInstruction(i store.Instruction) error {
	if err := t.writable("PutInstruction"); err != nil {
		return err
	}
	if err := required("instruction", "ID", i.ID); err != nil {
		return err
	}
	cur, err := stored[instructionV1](t, instructionKey(i.ID), "instruction", i.ID)
	if err != nil {
		return err
	}
	if err := required("instruction", "Workspace", i.Workspace); err != nil {
		return err
	}
	v := toInstruction(i, cur.Seq)
	b, err := encode(v)
	if err != nil {
		return err
	}
	if err := firstErrOf(
		func() error { return t.setRecord(instructionKey(i.ID), b, v) },
		func() error { return t.reindex(instructionIndex(cur), instructionIndex(v)) },
		func() error { return t.moveOpen(&cur, v) },
	); err != nil {
		return err
	}
	t.changes.add(changeV1{Workspace: v.Workspace, Kind: store.ChangeInstruction, Instruction: &v}, string(v.ID), b)
	return nil
}

// ListInstructions returns the instructions of ws, any state, in insert
// order.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	ids, err := t.ids(ownedList(tInstrByWS, string(ws)), nil, 0)
	if err != nil {
		return nil, err
	}
	return load(t, ids, instructionKeyOf, instructionV1.record)
}

// OpenInstructions returns the open instructions of ws (pending or
// unknown), in insert order as ListInstructions, reading only those: the
// one value that lists them (see openKey) and their records.
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	set, err := t.openSet(ws)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(set))
	for n, e := range set {
		ids[n] = e.id
	}
	return load(t, ids, instructionKeyOf, instructionV1.record)
}

// openSet returns the open instructions of ws from openKey (which enters
// the read set, so that an Update that read it conflicts with any
// concurrent change to it).
func (t *tx) openSet(ws baton.WorkspaceID) ([]openEntry, error) {
	k := openKey(ws)
	item, err := t.get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	var set []openEntry
	if err == nil {
		err = item.Value(func(b []byte) (derr error) { set, derr = decodeOpenSet(b); return derr })
	}
	if err != nil {
		return nil, storageErr(fmt.Sprintf("read (key %q)", []byte(k)), err)
	}
	return set, nil
}

// moveOpen updates the open instructions for an instruction written as v,
// which was cur (nil: inserted): it leaves the set of cur's workspace if
// it was open there and is not any more, and joins the set of v's
// workspace if it is open and was not there. A write that keeps an
// instruction open, or closed, reads and writes no set. The record is
// written already: a set that cannot be read breaks the transaction, as
// a failed write does, so that the record never commits without it.
func (t *tx) moveOpen(cur *instructionV1, v instructionV1) error {
	was := cur != nil && cur.State.Open()
	same := cur != nil && cur.Workspace == v.Workspace
	if was && (!v.State.Open() || !same) {
		set, err := t.openSet(cur.Workspace)
		if err != nil {
			return t.breakWith(err)
		}
		if err := t.putOpenSet(cur.Workspace, removeOpen(set, cur.Seq, string(cur.ID))); err != nil {
			return err
		}
	}
	if v.State.Open() && (!was || !same) {
		set, err := t.openSet(v.Workspace)
		if err != nil {
			return t.breakWith(err)
		}
		return t.putOpenSet(v.Workspace, addOpen(set, v.Seq, string(v.ID)))
	}
	return nil
}

// breakWith marks the transaction broken by err (see tx.broken), unless
// it is already, and returns err.
func (t *tx) breakWith(err error) error {
	if t.broken == nil {
		t.broken = err
	}
	return err
}

// putOpenSet writes the open instructions of ws (deleting the key when
// there are none).
func (t *tx) putOpenSet(ws baton.WorkspaceID, set []openEntry) error {
	if len(set) == 0 {
		return t.del(openKey(ws))
	}
	return t.set(openKey(ws), appendOpenSet(nil, set))
}
