package engine

import (
	"context"
	"iter"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/transcript"
)

// ErrNoTranscript: the engine holds no transcript of the session (it never
// ran it here, or the transcript is gone). It matches baton.ErrNotFound.
var ErrNoTranscript = baton.NewError(baton.ErrNotFound, "engine: no transcript of the session")

// Transcriber is an optional Engine capability: it reads back, from its own
// records, the conversation of a session it ran. The briefings of a
// transfer's target and of a fresh continuation replay it (bounded and
// redacted by package recap); without the capability they say that the
// conversation was not included.
type Transcriber interface {
	// Transcript returns the events of session sid, oldest first, each
	// marked with the turn it belongs to (transcript.Normal, or
	// transcript.ReportOnly for the prompt and answer of a report-only
	// turn). The sequence reads lazily
	// and in bounded batches, so ranging over a long transcript never
	// holds it whole; it may be ranged over more than once, each time from
	// the start. It yields a non-nil error at most once, as its last pair:
	// ctx's error, or a read error (the events before it were read
	// correctly). Errors: ErrNoTranscript when the engine holds none for
	// sid.
	Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error)
}
