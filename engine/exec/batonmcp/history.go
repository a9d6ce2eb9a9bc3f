package batonmcp

import (
	"context"
	"errors"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/recap"
)

// TranscriptHistory is an mcpserver.History over the exec transcript at
// Path (exec.Engine.TranscriptPath). Each call opens the transcript, reads
// through its offset index and closes it, so it holds no file between
// calls and sees the events a live launch appended since. Safe for
// concurrent use.
type TranscriptHistory struct {
	Path string
}

var _ mcpserver.History = TranscriptHistory{}

// Len implements mcpserver.History. Errors: those of exec.OpenTranscript
// and Transcript.Len.
func (h TranscriptHistory) Len(ctx context.Context) (n int64, err error) {
	t, err := exec.OpenTranscript(h.Path)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	return t.Len(ctx)
}

// Events implements mcpserver.History. Errors: those of
// exec.OpenTranscript and Transcript.Events.
func (h TranscriptHistory) Events(ctx context.Context, from int64, n int) (evs []recap.Event, err error) {
	t, err := exec.OpenTranscript(h.Path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	return t.Events(ctx, from, n)
}

// History returns the function mcpserver.Config.History wants: the
// handoff's source session, read from its transcript in e. A handoff with
// no source session, or whose source has no transcript in e (it ran on
// another engine), has no history: the tool then refuses with
// mcpserver.ErrNoHistory. Errors: the Coordinator's (handoff.ErrNotFound).
func History(co *handoff.Coordinator, e *exec.Engine) func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
	return func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
		h, err := co.Get(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		if h.SourceSession == "" {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the handoff %s has no source session", id)
		}
		th := TranscriptHistory{Path: e.TranscriptPath(h.SourceSession)}
		if _, err := th.Len(ctx); errors.Is(err, baton.ErrNotFound) {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the source session %s has no transcript here", h.SourceSession)
		} else if err != nil {
			return nil, err
		}
		return th, nil
	}
}
