package workspace

import (
	"context"
	"iter"

	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

// OmitUnreadable begins the reason a briefing gives for leaving out a
// conversation whose transcript could not be read.
const OmitUnreadable = "its transcript could not be read: "

// Replay renders a briefing over the conversation seq (an engine's
// transcript, as Conversation returns it), as the default briefings do:
// render is called with in.Events ranging over seq; when seq ends in an
// error, render is called once more without events, in.Omitted saying that
// the transcript could not be read, so that the briefing says the
// conversation was not included rather than replay part of it. A broken
// transcript costs the briefing its conversation, not the launch. A nil
// seq renders in as given: its Events (a caller's own) or, when nil, its
// Omitted. Errors: ctx's, when it ended while seq was read.
func Replay(ctx context.Context, seq iter.Seq2[transcript.Event, error], in recap.Input, render func(recap.Input) string) (string, error) {
	if seq == nil {
		return render(in), nil
	}
	events, readErr := until(seq)
	with := in
	with.Events = events
	out := render(with)
	if err := readErr(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		in.Events, in.Omitted = nil, OmitUnreadable+err.Error()
		return render(in), nil
	}
	return out, nil
}

// until turns seq (an engine's transcript, which yields an error at most
// once, last) into a sequence of events that stops at the first error, and
// a function that returns that error once the sequence was ranged over
// (nil when it ended cleanly or was not ranged over): the events before
// the error are correct, but the conversation is incomplete.
func until(seq iter.Seq2[transcript.Event, error]) (iter.Seq[transcript.Event], func() error) {
	var err error
	events := func(yield func(transcript.Event) bool) {
		err = nil
		for ev, e := range seq {
			if e != nil {
				err = e
				return
			}
			if !yield(ev) {
				return
			}
		}
	}
	return events, func() error { return err }
}
