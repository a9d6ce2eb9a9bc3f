package session

import (
	"context"
	"errors"
	"iter"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// The text around the new message in a fresh session's opening prompt. The
// briefing tells the agent to read what follows it as history; this heading
// marks where the history stops and the message to act on starts.
const (
	newMessageHeading = "\n\n## New message\n\nEverything above is history. This is the message to act on now:\n\n"
	// taskStandIn replaces a new message that is the original task itself,
	// so that the task appears once.
	taskStandIn = "Carry on with the original task, quoted above."
)

// briefing replays the record for a fresh session, without a trailing
// echo of the new message, and without the briefing's final line break.
// in.Events is ranged over once; nil means the conversation is not
// included (see recap.Input).
func briefing(in recap.Input, prompt string, lim recap.Limits) string {
	in.Events = withoutEcho(in.Events, prompt)
	return strings.TrimRight(recap.Conversation(in, lim), "\n")
}

// opening is a fresh session's opening prompt: the briefing, then the new
// message under its heading. A message that is the task, when the briefing
// quotes that task whole, is replaced by a line pointing at it, so the task
// appears once; otherwise the message is delivered as written.
func opening(briefing, prompt, task string) string {
	msg := prompt
	if t := strings.TrimSpace(task); t != "" && strings.TrimSpace(prompt) == t && strings.Contains(briefing, quoted(t)) {
		msg = taskStandIn
	}
	return briefing + newMessageHeading + msg
}

// quoted renders text as recap quotes it: each line behind "> ", an empty
// line as ">". If recap altered the text (clipped, redacted, stripped), the
// result is not found in the briefing and the message is sent in full.
func quoted(text string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" {
			b.WriteString(">\n")
			continue
		}
		b.WriteString("> ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Bounds of what withoutEcho holds back: user text beyond the prompt's own
// length plus echoSlack cannot be its echo, nor can more than echoEvents
// events.
const (
	echoSlack  = 1024
	echoEvents = 256
)

// withoutEcho yields events except a trailing user message whose text (its
// chunks joined, surrounding white space ignored) is prompt: the host may
// have appended the continuation's own message before the briefing is
// built, and a briefing must never replay the message it precedes. It
// holds back at most the trailing user text that could be that echo, so
// its memory stays O(len(prompt)) whatever the transcript's length.
func withoutEcho(events iter.Seq[transcript.Event], prompt string) iter.Seq[transcript.Event] {
	want := strings.TrimSpace(prompt)
	if events == nil || want == "" {
		return events
	}
	limit := len(prompt) + echoSlack
	return func(yield func(transcript.Event) bool) {
		var held []transcript.Event
		size := 0 // bytes of user message text in held
		pop := func() bool {
			ev := held[0]
			held = held[1:]
			if userText(ev) {
				size -= len(ev.Text)
			}
			return yield(ev)
		}
		for ev := range events {
			switch {
			case userText(ev):
				held = append(held, ev)
				size += len(ev.Text)
			case ev.Kind == transcript.Message:
				// Another speaker's message: no trailing user message yet.
				for len(held) > 0 {
					if !pop() {
						return
					}
				}
				if !yield(ev) {
					return
				}
				continue
			case len(held) == 0:
				if !yield(ev) {
					return
				}
				continue
			default:
				held = append(held, ev) // a note or tool call inside the trailing run
			}
			for len(held) > 0 && (size > limit || len(held) > echoEvents) {
				if !pop() {
					return
				}
			}
		}
		for _, ev := range held[:echoStart(held, want)] {
			if !yield(ev) {
				return
			}
		}
	}
}

func userText(ev transcript.Event) bool {
	return ev.Kind == transcript.Message && ev.Speaker == transcript.User
}

// echoStart returns the index of the user event of held where a suffix
// whose user text is want begins, or len(held) when there is none.
func echoStart(held []transcript.Event, want string) int {
	var all strings.Builder
	starts := make([]int, len(held))
	for i, ev := range held {
		starts[i] = all.Len()
		if userText(ev) {
			all.WriteString(ev.Text)
		}
	}
	text := all.String()
	for i := len(held) - 1; i >= 0; i-- {
		if !userText(held[i]) {
			continue
		}
		suffix := strings.TrimSpace(text[starts[i]:])
		if suffix == want {
			return i
		}
		if len(suffix) > len(want) {
			break
		}
	}
	return len(held)
}

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
	e, err := s.engineOf(sess.Config.Engine)
	if err != nil {
		return nil, baton.Errorf(engine.ErrNoTranscript, "%v (session %s)", err, sid)
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
