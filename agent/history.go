package agent

import (
	"context"
	"errors"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// transcriptHistory is an mcpserver.History over the transcript file at
// Path (exec.Engine.TranscriptPath). Each call opens the transcript, reads
// through its offset index and closes it, so it holds no file between
// calls and sees the events a live launch appended since. Safe for
// concurrent use.
type transcriptHistory struct {
	Path string
}

// Len implements mcpserver.History. Errors: an error matching
// baton.ErrNotFound when there is no transcript, ctx's, or the file
// system's.
func (h transcriptHistory) Len(ctx context.Context) (int64, error) {
	return read(h.Path, func(r *tlog.Reader) (int64, error) { return r.Len(ctx) })
}

// Events implements mcpserver.History. Errors: those of Len, baton.ErrInvalid
// for a negative from or n, or an error matching baton.ErrInternal for a
// corrupt transcript.
func (h transcriptHistory) Events(ctx context.Context, from int64, n int) ([]transcript.Event, error) {
	return read(h.Path, func(r *tlog.Reader) ([]transcript.Event, error) { return r.Events(ctx, from, n) })
}

// read opens the transcript at path, calls f on it and closes it.
func read[T any](path string, f func(*tlog.Reader) (T, error)) (v T, err error) {
	r, err := tlog.OpenReader(path)
	if err != nil {
		return v, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	return f(r)
}

// history returns the function mcpserver.Config.History wants: the
// handoff's source session, read from its transcript in the engine of reg
// its configuration names (SourceConfig.Engine), when that engine keeps
// transcript files (the CLI engines, and an ACP engine of Config.Engines).
// A handoff with no source session, or whose source ran on an engine that
// keeps none (or left no transcript there), has no history: the tool then
// refuses with mcpserver.ErrNoHistory. Errors: the Coordinator's
// (handoff.ErrNotFound).
func history(co *handoff.Coordinator, reg engine.Registry) func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
	return func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
		h, err := co.Get(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		if h.SourceSession == "" {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the handoff %s has no source session", id)
		}
		e := reg[h.SourceConfig.Engine]
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
