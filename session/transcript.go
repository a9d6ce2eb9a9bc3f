package session

import (
	"context"
	"errors"
	"iter"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// Transcript returns the conversation of session sid as the engine it ran
// on recorded it: the Service's engine, or the one an *engine.Registry
// names in the session's configuration, when that engine is an
// engine.Transcriber (see it for the sequence: lazy, bounded batches,
// every event marked with its turn, at most one error, last). Errors:
// baton.ErrInvalid for a nil context, ErrNoSession (unknown),
// engine.ErrNoTranscript (the engine keeps no transcripts, is not
// registered, or holds none of sid), the store's.
func (s *Service) Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	if ctx == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	var sess store.Session
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		sess, err = tx.GetSession(sid)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, baton.Errorf(workspace.ErrNoSession, "%s", sid)
	}
	if err != nil {
		return nil, err
	}
	e := s.engine
	if r, ok := e.(*engine.Registry); ok {
		if e, ok = r.Lookup(sess.Config.Engine); !ok {
			return nil, baton.Errorf(engine.ErrNoTranscript, "engine %q of session %s is not registered", sess.Config.Engine, sid)
		}
	}
	t, ok := e.(engine.Transcriber)
	if !ok {
		return nil, baton.Errorf(engine.ErrNoTranscript, "engine %q keeps no transcripts", sess.Config.Engine)
	}
	return t.Transcript(ctx, sid)
}

// Reasons a briefing gives for a conversation it does not include.
const (
	omitNoTranscript = "no transcript of it is available here"
	omitNoSession    = "no previous session is known"
)

// Conversation returns what a briefing replays of session sid: its
// engine's transcript (Transcript), or, when none is to be had (no session
// named, an engine that keeps no transcripts, none of sid, a read that
// failed), a nil sequence and the reason a briefing gives for leaving the
// conversation out. Errors: ctx's, and only ctx's.
func (p *supervisor) Conversation(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], string, error) {
	s := p.svc()
	if sid == "" {
		return nil, omitNoSession, nil
	}
	seq, err := s.Transcript(ctx, sid)
	switch {
	case err == nil:
		return seq, "", nil
	case ctx != nil && ctx.Err() != nil:
		return nil, "", ctx.Err()
	case errors.Is(err, engine.ErrNoTranscript), errors.Is(err, workspace.ErrNoSession):
		return nil, omitNoTranscript, nil
	}
	s.log.Warn("a briefing leaves out a conversation whose transcript could not be opened",
		zap.String("session", string(sid)), zap.Error(err))
	return nil, workspace.OmitUnreadable + err.Error(), nil
}
