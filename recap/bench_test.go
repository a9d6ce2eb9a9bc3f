package recap

import (
	"iter"
	"regexp"
	"strings"
	"testing"

	"github.com/batonhq/baton/transcript"
)

// benchCorpus is the text transcript chunks are cut from: prose with some
// multi-byte characters, code, line breaks and the odd token.
var benchCorpus = func() string {
	parts := []string{
		"The parser now accepts trailing commas in argument lists. ",
		"I ran go test ./... and every package passed, including the race detector run.\n",
		"Le résumé est prêt; the naïve approach failed on 日本語 input. ",
		"```go\nfunc (p *Parser) next() token { return p.lex.scan() }\n```\n",
		"Set GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 before pushing. ",
		"Could you also check the migration? It still says pending in the log.\n",
		"- step one: read the config\n- step two: validate it\n",
		"The cache key is built from the path and the mod time, so a touch invalidates it. ",
	}
	var b strings.Builder
	for i := 0; b.Len() < 1<<16; i++ {
		b.WriteString(parts[(i*7+i/3)%len(parts)])
	}
	return b.String()
}()

// benchTranscript yields size bytes of message text, lazily: chunks are cut from
// benchCorpus, so nothing is materialised and nothing is allocated per
// event. Messages alternate speakers and run from one to two dozen chunks,
// with tool calls and heartbeats in between.
func benchTranscript(size int) iter.Seq[transcript.Event] {
	return func(yield func(transcript.Event) bool) {
		x := uint64(0x9E3779B97F4A7C15)
		rnd := func(n int) int {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			return int(x % uint64(n))
		}
		sp := transcript.User
		for sent := 0; sent < size; {
			for range 1 + rnd(24) {
				n := 20 + rnd(280)
				off := rnd(len(benchCorpus) - n)
				if !yield(transcript.Event{Speaker: sp, Kind: transcript.Message, Text: benchCorpus[off : off+n]}) {
					return
				}
				sent += n
				switch rnd(16) {
				case 0:
					if !yield(transcript.Event{Speaker: sp, Kind: transcript.ToolCall, Text: "go test ./..."}) {
						return
					}
				case 1:
					if !yield(transcript.Event{Speaker: sp, Kind: transcript.Message, Text: "[heartbeat]"}) {
						return
					}
				}
			}
			if sp == transcript.Agent && rnd(4) == 0 {
				// The tool's end-of-turn marker, which the replay strips.
				if !yield(transcript.Event{Speaker: sp, Kind: transcript.Message, Text: "\nDONE"}) {
					return
				}
			}
			sp = transcript.User + transcript.Agent - sp
		}
	}
}

func BenchmarkConversation(b *testing.B) {
	lim := Limits{
		Markers: []*regexp.Regexp{regexp.MustCompile(`\s*DONE\s*$`)},
		Secrets: []string{"correct horse battery staple", "tok-0123456789abcdef"},
	}
	for _, bc := range []struct {
		name string
		size int
	}{{"size=1MB", 1 << 20}, {"size=100MB", 100 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(bc.size))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				in := Input{Task: "Fix the parser", Ending: "killed by a restart", Events: func(yield func(transcript.Event) bool) {
					for ev := range benchTranscript(bc.size) {
						events++
						if !yield(ev) {
							return
						}
					}
				}}
				if out := Conversation(in, lim); len(out) == 0 {
					b.Fatal("empty briefing")
				}
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
