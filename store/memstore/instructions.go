package memstore

import (
	"cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// instructionRow is a stored instruction and its insert number.
type instructionRow struct {
	i   store.Instruction
	seq int64
}

func (st *state) putInstruction(r instructionRow) {
	st.deleteInstruction(r.i.ID)
	st.instructions[r.i.ID] = r
	st.instrByWS.add(r.i.Workspace, r.i.ID)
	if r.i.State.Open() {
		st.openByWS.add(r.i.Workspace, r.i.ID)
	}
}

func (st *state) deleteInstruction(id baton.InstructionID) {
	cur, ok := st.instructions[id]
	if !ok {
		return
	}
	st.instrByWS.remove(cur.i.Workspace, id)
	st.openByWS.remove(cur.i.Workspace, id)
	delete(st.instructions, id)
}

func (st *state) restoreInstruction(id baton.InstructionID) func() {
	old, ok := st.instructions[id]
	if !ok {
		return func() { st.deleteInstruction(id) }
	}
	return func() { st.putInstruction(old) }
}

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	if err := t.readable(); err != nil {
		return store.Instruction{}, err
	}
	r, ok := t.st.instructions[id]
	if !ok {
		return store.Instruction{}, notFound("instruction", id)
	}
	return r.i, nil
}

// PutInstruction inserts or replaces i (a stored one keeps its place in
// ListInstructions) and adds a change to its workspace's feed.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutInstruction(i store.Instruction) error {
	if err := t.begin("PutInstruction", key("instruction", "ID", i.ID), key("instruction", "Workspace", i.Workspace)); err != nil {
		return err
	}
	cur, found := t.st.instructions[i.ID]
	i = records.Instruction(i, records.UTC)
	t.onUndo(t.st.restoreInstruction(i.ID))
	t.st.putInstruction(instructionRow{i: i, seq: t.seqOf(found, cur.seq)})
	t.recordInstruction(i)
	return nil
}

// ListInstructions returns the instructions of ws, any state, oldest
// (first inserted) first.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return t.instructionsIn(t.st.instrByWS, ws)
}

// OpenInstructions returns the pending and unknown instructions of ws,
// oldest first, from an index that holds only those.
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return t.instructionsIn(t.st.openByWS, ws)
}

// instructionsIn returns the instructions idx holds for ws, oldest first.
func (t *tx) instructionsIn(idx index[baton.WorkspaceID, baton.InstructionID], ws baton.WorkspaceID) ([]store.Instruction, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	rows := collect(idx[ws], func(id baton.InstructionID) instructionRow { return t.st.instructions[id] },
		func(a, b instructionRow) int { return cmp.Compare(a.seq, b.seq) })
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]store.Instruction, len(rows))
	for n, r := range rows {
		out[n] = r.i
	}
	return out, nil
}
