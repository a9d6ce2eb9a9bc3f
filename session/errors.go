package session

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
)

// Errors returned by this package. Match them with errors.Is; each is also
// matched by its code-level sentinel (baton.ErrBusy, ...).
var (
	// ErrWorkspaceBusy: the workspace is reserved (a session transfer is
	// pending) and the caller did not present the owner token.
	ErrWorkspaceBusy = workspace.ErrWorkspaceBusy
	// ErrSessionRunning: a process already runs in the workspace; at most
	// one may.
	ErrSessionRunning = baton.NewError(baton.ECONFLICT, "a session is already running in the workspace")
	// ErrWorkspaceExists: CreateWorkspace with an id already in use.
	ErrWorkspaceExists = baton.NewError(baton.ECONFLICT, "workspace already exists")
	// ErrArchived: the workspace is archived and takes no new work.
	ErrArchived = baton.NewError(baton.ECONFLICT, "workspace is archived")
	// ErrNoWorkspace: no workspace has that id.
	ErrNoWorkspace = workspace.ErrNoWorkspace
	// ErrNoSession: there is no session to resume or message.
	ErrNoSession = workspace.ErrNoSession
	// ErrLaunchRefused: a launch's precondition (supplied by the caller,
	// for example "the transfer is still at this attempt") no longer holds.
	ErrLaunchRefused = baton.NewError(baton.ESTALE, "launch refused: its precondition no longer holds")
	// ErrResumeOnly: an automated trigger found nothing it may resume; it
	// never starts a briefed fresh session on its own.
	ErrResumeOnly = baton.NewError(baton.ECONFLICT, "automated trigger may only resume, and there is nothing to resume")
)
