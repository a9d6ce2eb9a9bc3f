package workspace

import (
	"github.com/batonhq/baton"
)

// Errors of the workspace rules. Package session exports each under the
// same name; package handoff exports some of them again.
var (
	// ErrWorkspaceBusy: the workspace is reserved (a session transfer is
	// pending) and the caller did not present the owner token.
	ErrWorkspaceBusy = baton.NewError(baton.ErrBusy, "workspace is reserved by a pending session transfer")
	// ErrStaleEpoch: an owner token of an older reservation was presented.
	ErrStaleEpoch = baton.NewError(baton.ErrStale, "the reservation was taken again since that token was issued")
	// ErrNoWorkspace: no workspace has that id.
	ErrNoWorkspace = baton.NewError(baton.ErrNotFound, "no such workspace")
	// ErrArchived: the workspace is archived and takes no new work.
	ErrArchived = baton.NewError(baton.ErrConflict, "workspace is archived")
	// ErrNoSession: there is no session to resume or message.
	ErrNoSession = baton.NewError(baton.ErrNotFound, "no such session")
)
