package recap

import (
	"iter"
	"strings"
	"testing"

	"github.com/batonhq/baton/transcript"
)

// hugeMessage yields one agent message of size bytes in 4 KiB chunks.
func hugeMessage(size int) iter.Seq[transcript.Event] {
	chunk := strings.Repeat("all work and no play ", 200)[:4096]
	return func(yield func(transcript.Event) bool) {
		for sent := 0; sent < size; sent += len(chunk) {
			if !yield(transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: chunk}) {
				return
			}
		}
	}
}

// TestReplayMemoryIsBounded streams transcripts of growing size and checks
// that what the replay holds depends on the budget, not on the transcript:
// the window's arena and records, and the buffer of the message being
// accumulated, however long that message is.
func TestReplayMemoryIsBounded(t *testing.T) {
	lim := Limits{MaxChars: 3000, MaxMessageChars: 500}
	maxChars, maxMsg := lim.maxChars(), lim.maxMessageChars()
	tests := []struct {
		name   string
		events iter.Seq[transcript.Event]
	}{
		{"1MB of messages", benchTranscript(1 << 20)},
		{"16MB of messages", benchTranscript(16 << 20)},
		{"one 16MB message", hugeMessage(16 << 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRedactor(nil, nil)
			p := newReplay(r, lim, "", tt.events)
			if p.win.total == 0 {
				t.Fatal("no message replayed")
			}
			// Bytes are at most 4 per rune; growth by doubling and the dead
			// half before compaction give a factor of 4 more.
			if got, max := cap(p.win.arena), 16*(maxChars+maxMsg); got > max {
				t.Errorf("window arena holds %d bytes, want at most %d", got, max)
			}
			// A rendered message costs at least 11 runes.
			if got, max := cap(p.win.recs), 4*(maxChars/11+2); got > max {
				t.Errorf("window holds %d records, want at most %d", got, max)
			}
			if got, max := cap(p.msg.buf), 2*(4*maxMsg+r.lookahead); got > max {
				t.Errorf("message buffer holds %d bytes, want at most %d", got, max)
			}
		})
	}
}

// TestWindowRenderMatchesPush checks that the sizes the window counts are
// the sizes it renders, so that the budget arithmetic is exact.
func TestWindowRenderMatchesPush(t *testing.T) {
	bodies := []string{"one line", "two\nlines", "blank\n\nline inside", "x", "日本語\n\n\nend"}
	for _, trunc := range []bool{false, true} {
		for _, b := range bodies {
			w := window{budget: 1 << 20}
			w.push(transcript.User, []byte(b), len([]rune(b)), trunc)
			got := len([]rune(string(w.render(nil, 1<<20))))
			if got != w.recs[0].size {
				t.Errorf("%q (trunc %v): rendered %d runes, counted %d", b, trunc, got, w.recs[0].size)
			}
		}
	}
}
