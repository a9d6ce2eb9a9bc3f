package recap

import (
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/transcript"
)

// This file holds the reference the streaming replay is checked against: the
// same rules applied the simple way, on a materialised transcript, with no
// window, no ring and no chunk-by-chunk accumulation.

type refMessage struct {
	speaker transcript.Speaker
	text    string // coalesced, before the pipeline
}

// refCoalesce applies the filtering and coalescing rules to a slice.
func refCoalesce(evs []transcript.Event) []refMessage {
	var out []refMessage
	open, gap := false, false
	for _, ev := range evs {
		if ev.Turn == transcript.ReportOnly {
			open = false // not conversation, and a boundary
			continue
		}
		if ev.Kind != transcript.Message || (ev.Speaker != transcript.User && ev.Speaker != transcript.Agent) {
			if ev.Kind == transcript.ToolCall {
				gap = true
			}
			continue
		}
		last := len(out) - 1
		same := open && out[last].speaker == ev.Speaker
		if strings.TrimSpace(ev.Text) == "" {
			if same {
				out[last].text += ev.Text
			}
			continue
		}
		if IsHeartbeat(ev.Text) {
			continue
		}
		if !same {
			out = append(out, refMessage{speaker: ev.Speaker, text: ev.Text})
			open, gap = true, false
			continue
		}
		t := out[last].text
		if gap && !isSpaceByte(t[len(t)-1]) && !isSpaceByte(ev.Text[0]) {
			t += "\n"
		}
		out[last].text = t + ev.Text
		gap = false
	}
	return out
}

type refClipped struct {
	speaker transcript.Speaker
	body    []byte
	runes   int
	trunc   bool
}

// refReplay renders the conversation part the way the spec says, from the
// whole list of messages.
func refReplay(task string, evs []transcript.Event, lim Limits) string {
	r := newRedactor(lim.Secrets, lim.Markers)
	clip := func(text string) ([]byte, int, bool) {
		var h head
		h.reset(lim.maxMessageChars(), r.lookahead)
		h.add(text) // whole, not chunk by chunk
		body, n, trunc := r.clip(nil, &h, lim.maxMessageChars())
		return slices.Clone(body), n, trunc
	}
	taskBody, _, taskTrunc := clip(task)
	var msgs []refClipped
	for _, m := range refCoalesce(evs) {
		body, n, trunc := clip(m.text)
		if len(body) == 0 && !trunc {
			continue
		}
		if m.speaker == transcript.User && len(taskBody) > 0 && string(body) == string(taskBody) && trunc == taskTrunc {
			body, n, trunc = []byte(taskStandIn), len(taskStandIn), false
		}
		msgs = append(msgs, refClipped{m.speaker, body, n, trunc})
	}
	if len(msgs) == 0 {
		return nothingExchanged
	}
	budget := lim.maxChars()
	total := -1
	for _, m := range msgs {
		total += messageCost(m.speaker, m.body, m.runes, m.trunc) + 1
	}
	dropped := 0
	for len(msgs) > 1 && noteCost(dropped)+total > budget {
		total -= messageCost(msgs[0].speaker, msgs[0].body, msgs[0].runes, msgs[0].trunc) + 1
		msgs = msgs[1:]
		dropped++
	}
	var b []byte
	if dropped > 0 {
		b = append(b, omitted(dropped, "earlier", "message")+"\n"...)
	}
	for i, m := range msgs {
		if i > 0 {
			b = append(b, '\n')
		}
		if len(msgs) == 1 && noteCost(dropped)+messageCost(m.speaker, m.body, m.runes, m.trunc) > budget {
			left := budget - noteCost(dropped) - len(label(m.speaker))
			b = appendMessage(b, m.speaker, fitQuoted(string(m.body), quote, left), true)
			continue
		}
		b = appendMessage(b, m.speaker, m.body, m.trunc)
	}
	return string(b)
}

// section returns the text of a briefing between a "## " heading and the
// next line starting at column 0 with "## " or closing (every recorded text
// is quoted, so only the builder's own lines start that way).
func sectionOf(t *testing.T, out, heading, next string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\n## "+heading+"\n\n")
	if !ok {
		t.Fatalf("no %q section in:\n%s", heading, out)
	}
	body, _, ok := strings.Cut(rest, next)
	if !ok {
		t.Fatalf("section %q does not end with %q in:\n%s", heading, next, out)
	}
	return body
}

// replayOf returns the conversation part of a Conversation briefing.
func replayOf(t *testing.T, out string) string {
	t.Helper()
	return sectionOf(t, out, "Conversation so far", closingLine)
}

// events builds a transcript from speaker/text pairs of messages.
func events(pairs ...any) []transcript.Event {
	var evs []transcript.Event
	for i := 0; i+1 < len(pairs); i += 2 {
		switch x := pairs[i].(type) {
		case transcript.Speaker:
			evs = append(evs, transcript.Event{Speaker: x, Kind: transcript.Message, Text: pairs[i+1].(string)})
		case transcript.Kind:
			evs = append(evs, transcript.Event{Speaker: transcript.Agent, Kind: x, Text: pairs[i+1].(string)})
		}
	}
	return evs
}

func isSpaceByte(c byte) bool { return strings.IndexByte(" \t\n\v\f\r", c) >= 0 }

// messageCost is the rendered size of a replayed message, as the window
// counts it.
func messageCost(s transcript.Speaker, body []byte, runes int, trunc bool) int {
	return len(label(s)) + quotedCost(body, runes, trunc, quote)
}
