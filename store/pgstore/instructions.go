package pgstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var instructions = newTable(kindInstruction, "instructions",
	[]string{"id", "workspace", "text", "state", "session", "created_at", "updated_at"},
	func(i *store.Instruction) []any {
		return []any{&i.ID, &i.Workspace, &i.Text, &i.State, &i.Session, &i.CreatedAt, &i.UpdatedAt}
	},
	func(i store.Instruction) baton.WorkspaceID { return i.Workspace })

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return get(t, instructions, string(id))
}

// PutInstruction inserts or replaces i; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutInstruction(i store.Instruction) error {
	if err := putChecked(t, instructions, "PutInstruction", string(i.ID), i); err != nil {
		return err
	}
	t.changes(i.Workspace, kindInstruction, string(i.ID), i)
	return nil
}

// ListInstructions returns the instructions of ws, oldest first.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return list(t, instructions, ws, "WHERE workspace = $1 ORDER BY ord", string(ws))
}

// OpenInstructions returns the pending and unknown instructions of ws,
// oldest first, from the partial index that holds only those
// (instructions_open).
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return list(t, instructions, ws, "WHERE workspace = $1 AND "+openInstructionSQL+" ORDER BY ord", string(ws))
}

// openInstructionSQL is the predicate of the index instructions_open: the
// query repeats it for the planner to use the index.
const openInstructionSQL = "state IN ('pending', 'unknown')"
