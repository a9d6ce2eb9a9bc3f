package agent

import (
	"context"
	"errors"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/transcript"
)

// transcriptHistory is an mcpserver.History over the exec transcript at
// Path (exec.Engine.TranscriptPath). Each call opens the transcript, reads
// through its offset index and closes it, so it holds no file between
// calls and sees the events a live launch appended since. Safe for
// concurrent use.
type transcriptHistory struct {
	Path string
}

var _ mcpserver.History = transcriptHistory{}

// Len implements mcpserver.History. Errors: those of exec.OpenTranscript
// and Transcript.Len.
func (h transcriptHistory) Len(ctx context.Context) (n int64, err error) {
	t, err := exec.OpenTranscript(h.Path)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	return t.Len(ctx)
}

// Events implements mcpserver.History. Errors: those of
// exec.OpenTranscript and Transcript.Events.
func (h transcriptHistory) Events(ctx context.Context, from int64, n int) (evs []transcript.Event, err error) {
	t, err := exec.OpenTranscript(h.Path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	return t.Events(ctx, from, n)
}

// history returns the function mcpserver.Config.History wants: the
// handoff's source session, read from its transcript in the engine of reg
// its configuration names (SourceConfig.Engine), when that engine keeps
// transcript files (the CLI engines, and an ACP engine of Config.Engines).
// A handoff with no source session, or whose source ran on an engine that
// keeps none (or left no transcript there), has no history: the tool then
// refuses with mcpserver.ErrNoHistory. Errors: the Coordinator's
// (handoff.ErrNotFound).
func history(co *handoff.Coordinator, reg *engine.Registry) func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
	return func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
		h, err := co.Get(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		if h.SourceSession == "" {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the handoff %s has no source session", id)
		}
		e, _ := reg.Lookup(h.SourceConfig.Engine)
		// An engine that keeps each session's transcript in a file of
		// package exec's format: exec's engines and package acp's.
		files, ok := e.(interface{ TranscriptPath(baton.SessionID) string })
		if !ok {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the source session %s ran on the engine %q, which keeps no transcript here", h.SourceSession, h.SourceConfig.Engine)
		}
		th := transcriptHistory{Path: files.TranscriptPath(h.SourceSession)}
		if _, err := th.Len(ctx); errors.Is(err, baton.ErrNotFound) {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the source session %s has no transcript here", h.SourceSession)
		} else if err != nil {
			return nil, err
		}
		return th, nil
	}
}
