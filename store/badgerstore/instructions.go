package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// instructionIndex is the entry of i in the instructions of its workspace,
// by insert number.
func instructionIndex(i instructionRow) []index {
	return []index{seqIndex(tInstrByWS, i.Workspace, i.Seq, i.ID)}
}

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return getRecord[instructionRow](t, recordKey(tInstruction, id), "instruction", id)
}

// PutInstruction inserts or replaces i (a stored one keeps its place in
// ListInstructions) and adds at commit a change to its workspace's feed.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutInstruction(i store.Instruction) error {
	k := recordKey(tInstruction, i.ID)
	cur, found, seq, err := currentSeq[instructionRow](t, "PutInstruction", k, tInstrByWS, i.Workspace, backend.Required(pkg, "instruction", "ID", i.ID), backend.Required(pkg, "instruction", "Workspace", i.Workspace))
	if err != nil {
		return err
	}
	v := toInstruction(i, seq)
	return putRecord(t, k, v, cur, found, tInstrByWS, i.Workspace, seq, instructionIndex, "instruction",
		func() error { return t.moveMember(openInstructions, cur.member(), v.member()) },
	)
}

// ListInstructions returns the instructions of ws, any state, in insert
// order.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return listed(t, ownedList(tInstrByWS, string(ws)), nil, 0, tInstruction, instructionRow.record)
}

// OpenInstructions returns the open instructions of ws (pending or
// unknown), in insert order as ListInstructions, reading only those: the
// one value that lists them (see openInstructions) and their records.
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return listedSet(t, openInstructions, ws, tInstruction, instructionRow.record)
}
