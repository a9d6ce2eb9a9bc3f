package workspace

import (
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// CheckWorkspaceID validates a workspace id the way every baton entry point
// does: 1..baton.MaxIDLen printable bytes after trimming. Errors: an
// error matching baton.ErrInvalid.
func CheckWorkspaceID(ws baton.WorkspaceID) error {
	if !baton.ValidID(string(ws)) {
		return baton.Errorf(baton.ErrInvalid, "workspace id must be 1..%d printable characters", baton.MaxIDLen)
	}
	return nil
}

// GetWorkspace reads a workspace inside tx, validating its id first.
// Errors: baton.ErrInvalid (malformed id), ErrNoWorkspace, the store's.
// Every package reads a caller-named workspace through it, so the answer
// to a bad or unknown id is the same everywhere.
func GetWorkspace(tx store.Tx, ws baton.WorkspaceID) (store.Workspace, error) {
	if err := CheckWorkspaceID(ws); err != nil {
		return store.Workspace{}, err
	}
	w, err := tx.GetWorkspace(ws)
	if errors.Is(err, store.ErrNotFound) {
		return store.Workspace{}, baton.Errorf(ErrNoWorkspace, "%s", ws)
	}
	return w, err
}

// GetActive is GetWorkspace refusing an archived workspace: ErrArchived.
func GetActive(tx store.Tx, ws baton.WorkspaceID) (store.Workspace, error) {
	w, err := GetWorkspace(tx, ws)
	if err == nil && w.Archived {
		return store.Workspace{}, ErrArchived
	}
	return w, err
}

// CheckConfig validates an engine configuration against eng the way every
// baton entry point does: well formed, and offered by the engine (an
// engine.Registry knows its engine names; an engine.Validator checks the
// rest). Errors match baton.ErrInvalid and, for a configuration the
// engines do not offer, engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig as well.
func CheckConfig(eng engine.Engine, cfg baton.EngineConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	var err error
	switch e := eng.(type) {
	case engine.Registry:
		err = e.Validate(cfg)
	case engine.Validator:
		err = e.Validate(cfg.Normalize())
	}
	if err != nil {
		return fmt.Errorf("%w: engine config: %w", baton.ErrInvalid, err)
	}
	return nil
}
