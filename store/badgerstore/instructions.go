package badgerstore

import (
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
		func() error { return t.moveMember(openInstructions, nil, v.member()) },
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
		func() error { m := cur.member(); return t.moveMember(openInstructions, &m, v.member()) },
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
	ids, err := t.memberIDs(openInstructions, ws)
	if err != nil {
		return nil, err
	}
	return load(t, ids, instructionKeyOf, instructionV1.record)
}
