package memstore

import (
	"maps"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

func (s *state) indexInstruction(i store.Instruction, in bool) {
	s.instrByWS.set(i.Workspace, i.ID, in)
	s.openByWS.set(i.Workspace, i.ID, in && i.State.Open())
}

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return get(t, t.st.instructions, "instruction", id)
}

// PutInstruction inserts or replaces i (a stored one keeps its place in
// ListInstructions) and adds a change to its workspace's feed.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutInstruction(i store.Instruction) error {
	if err := t.begin("PutInstruction", backend.Required(pkg, "instruction", "ID", i.ID), backend.Required(pkg, "instruction", "Workspace", i.Workspace)); err != nil {
		return err
	}
	i = records.Instruction(i, records.UTC)
	write(t, &t.st.instructions, i.ID, i, insertSeq(t, t.st.instructions, i.ID))
	t.changes.Add(i.ID, store.Change{Workspace: i.Workspace, Instruction: &i})
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
	return list(t, t.st.instructions, maps.Keys(idx[ws]), bySeq)
}
