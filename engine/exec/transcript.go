package exec

import (
	"context"
	"iter"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// Transcript errors. Match with errors.Is.
var (
	// ErrTranscriptCorrupt: the transcript or its index does not hold
	// what the other says (a torn write the writer has not repaired yet,
	// or a file edited by hand).
	ErrTranscriptCorrupt = tlog.ErrCorrupt
	// ErrTranscriptBusy: another writer (another Engine, in this process
	// or another) has the session's transcript open.
	ErrTranscriptBusy = tlog.ErrBusy
)

// Transcript reads a session's transcript: append-only JSON lines, one
// event each, beside an offset index, so reading event i costs the same at
// the start and at the end of a large file. A Transcript reads a file that
// a live launch may be appending to; it sees every event indexed when Len
// or Events is called. It is safe for concurrent use.
type Transcript struct{ r *tlog.Reader }

// OpenTranscript opens the transcript at path (see Engine.TranscriptPath).
// Errors: an error matching baton.ErrNotFound when there is none, or the file system's.
func OpenTranscript(path string) (*Transcript, error) {
	r, err := tlog.OpenReader(path)
	if err != nil {
		return nil, err
	}
	return &Transcript{r: r}, nil
}

// Len returns the number of events. Errors: ctx's, or the file system's.
func (t *Transcript) Len(ctx context.Context) (int64, error) { return t.r.Len(ctx) }

// Events returns up to n events starting at index from (0 is the first);
// fewer at the end, none when from is at or past the end. Errors:
// baton.ErrInvalid for a negative from or n, ErrTranscriptCorrupt, ctx's,
// or the file system's.
func (t *Transcript) Events(ctx context.Context, from int64, n int) ([]transcript.Event, error) {
	return t.r.Events(ctx, from, n)
}

// Close closes the files.
func (t *Transcript) Close() error { return t.r.Close() }

// Transcript implements engine.Transcriber from session sid's transcript
// file (TranscriptPath): each range opens it, reads it through its offset
// index a batch of events at a time, and closes it, so it holds one batch
// in memory whatever the transcript's length and sees what a live launch
// appended until then. Every event carries the turn of the launch that
// wrote it. Errors: engine.ErrNoTranscript when the session has no
// transcript here, or the file system's; while ranging, ctx's,
// ErrTranscriptCorrupt or the file system's.
func (e *Engine) Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	return tlog.Seq(ctx, e.TranscriptPath(sid), baton.Errorf(engine.ErrNoTranscript, "exec: no transcript of session %s", sid))
}
