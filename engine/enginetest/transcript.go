package enginetest

import (
	"context"
	"iter"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// recordEventLocked appends ev to the transcript of req's session, in
// req's turn (a request without a turn is a normal one). e.mu is held.
func (e *Engine) recordEventLocked(req engine.StartRequest, ev transcript.Event) {
	ev.Turn = req.Turn
	if ev.Turn == "" {
		ev.Turn = transcript.Normal
	}
	e.talk[req.Session] = append(e.talk[req.Session], ev)
}

// Transcript implements engine.Transcriber from the scripts: for each
// successful start of session sid, in start order, the user's prompt, then
// the script's Reply once readiness succeeded, each in the start's turn.
// The sequence yields the events recorded when it is ranged over, and ends
// with ctx's error if ctx is done. Errors: engine.ErrNoTranscript when no
// start of sid succeeded.
func (e *Engine) Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	e.mu.Lock()
	_, ok := e.talk[sid]
	e.mu.Unlock()
	if !ok {
		return nil, baton.Errorf(engine.ErrNoTranscript, "enginetest: session %s never started", sid)
	}
	return func(yield func(transcript.Event, error) bool) {
		e.mu.Lock()
		evs := slices.Clone(e.talk[sid])
		e.mu.Unlock()
		for _, ev := range evs {
			if err := ctx.Err(); err != nil {
				yield(transcript.Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}, nil
}
