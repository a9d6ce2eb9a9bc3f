package recap

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"

	"github.com/google/go-cmp/cmp"
)

// fuzzMarkers exercise both marker paths: the byte scan and the regexp.
var fuzzMarkers = []*regexp.Regexp{
	regexp.MustCompile(`\s*DONE\s*$`),
	regexp.MustCompile(`<<STOP>>`),
	regexp.MustCompile(`(?m)^\s*END\s*$`),
}

// fuzzToken is a built-in token shape the decoder can insert.
const fuzzToken = "ghp_Fz0123456789abcdefghijABCDEFGHIJ0123"

// alnumSecret maps s onto letters and digits, so that a secret found in the
// output can only have come from recorded text: the briefing's own text
// never has 12 letters or digits in a row (checked by templateText).
func alnumSecret(s string) string {
	const set = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, len(s))
	for i := range len(s) {
		b[i] = set[int(s[i])%len(set)]
	}
	return string(b)
}

// decodeEvents turns fuzz bytes into a transcript. Each event takes an op
// byte (speaker, kind, special text) and a length byte; the special texts
// insert the secret split across two chunks, a marker, a token or a
// heartbeat.
func decodeEvents(script []byte, secret string) []transcript.Event {
	kinds := []transcript.Kind{transcript.Message, transcript.Message, transcript.Message, transcript.ToolCall, transcript.Lifecycle, transcript.Note, 0, transcript.Message}
	var evs []transcript.Event
	for len(script) >= 2 {
		op, n := script[0], int(script[1])
		script = script[2:]
		sp, k := transcript.Speaker(op&3), kinds[(op>>2)&7]
		switch op >> 5 {
		case 4:
			// A chunk of a report-only turn: never replayed.
			n = min(n, len(script))
			evs = append(evs, transcript.Event{Speaker: sp, Kind: k, Text: string(script[:n]), Turn: transcript.ReportOnly})
			script = script[n:]
			continue
		case 5:
			cut := min(n%(len(secret)+1), len(secret))
			evs = append(evs, transcript.Event{Speaker: sp, Kind: k, Text: "key " + secret[:cut]}, transcript.Event{Speaker: sp, Kind: k, Text: secret[cut:] + " ok"})
			continue
		case 6:
			evs = append(evs, transcript.Event{Speaker: sp, Kind: k, Text: []string{"\nDONE", "<<STOP>>", "\nEND\n", "[heartbeat]"}[n%4]})
			continue
		case 7:
			evs = append(evs, transcript.Event{Speaker: sp, Kind: k, Text: "push with " + fuzzToken})
			continue
		}
		n = min(n, len(script))
		evs = append(evs, transcript.Event{Speaker: sp, Kind: k, Text: string(script[:n])})
		script = script[n:]
	}
	return evs
}

// templateText is all the text the builders write themselves.
var templateText = strings.Join([]string{briefingHeading, taskHeading, noTask, endingHeading, replayHeading,
	nothingExchanged, notIncluded, notAvailable, readWith, readWithEnd, taskStandIn, closingLine, handoffIntro, withReport, noMission, noReport, reportOmitted, noInstructions,
	omittedSection, handoffClosingLn, "Session transfer Previous session engine model native id unknown none",
	"Mission Report from the previous session Pending instructions",
	"(no text) earlier messages omitted more parts instructions",
	"How the previous session ended Conversation so far User Agent", baton.Redacted, truncationMark}, "\n")

// checkConversation asserts every property of one Conversation call.
func checkConversation(t *testing.T, task, ending string, evs []transcript.Event, lim Limits, secret string) {
	t.Helper()
	out := Conversation(Input{Task: task, Ending: ending, Events: slices.Values(evs)}, lim)
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 output: %q", out)
	}
	replay := replayOf(t, out)
	if n := utf8.RuneCountInString(replay); n > lim.maxChars() {
		t.Fatalf("replay is %d runes, budget %d:\n%s", n, lim.maxChars(), replay)
	}
	if bound := 2*lim.maxChars() + lim.maxMessageChars() + 600; utf8.RuneCountInString(out) > bound {
		t.Fatalf("briefing is %d runes, bound %d", utf8.RuneCountInString(out), bound)
	}
	// The streaming window agrees with the whole-transcript reference:
	// coalescing, dropping, clipping, omission count, newest message.
	if diff := cmp.Diff(refReplay(task, evs, lim), replay); diff != "" {
		t.Fatalf("replay differs from the reference (-want +got):\n%s", diff)
	}
	if (replay == nothingExchanged) != (len(refCoalesceKept(task, evs, lim)) == 0) {
		t.Fatalf("'nothing exchanged' said wrongly:\n%s", replay)
	}
	if strings.Contains(out, fuzzToken) {
		t.Fatalf("token leaked:\n%s", out)
	}
	if len(secret) >= 12 && !strings.Contains(templateText, secret) && strings.Contains(out, secret) {
		t.Fatalf("secret %q leaked:\n%s", secret, out)
	}
}

// refCoalesceKept returns the reference's messages that survive the pipeline.
func refCoalesceKept(task string, evs []transcript.Event, lim Limits) []string {
	var kept []string
	for _, m := range refCoalesce(evs) {
		r := newRedactor(lim.Secrets, lim.Markers)
		var h head
		h.reset(lim.maxMessageChars(), r.lookahead)
		h.add(m.text)
		if body, _, trunc := r.clip(nil, &h, lim.maxMessageChars()); len(body) > 0 || trunc {
			kept = append(kept, string(body))
		}
	}
	return kept
}

func fuzzLimits(maxChars, maxMsg int, secret string) Limits {
	lim := Limits{MaxChars: abs(maxChars) % 6000, MaxMessageChars: abs(maxMsg) % 3000,
		Markers: fuzzMarkers, Secrets: []string{secret}}
	if abs(maxMsg)%7 == 0 {
		lim.Secrets = append(lim.Secrets, "x") // a secret shorter than baton.Redacted
	}
	return lim
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// watchdog crashes the fuzzing process when one input runs for seconds, so
// that the fuzzer records it as a crasher instead of stalling on it. The
// returned function stops it.
func watchdog() func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			panic("one input ran for 5s")
		}
	}()
	return func() { close(done) }
}

func FuzzConversation(f *testing.F) {
	f.Add("Fix the login test", "crashed", []byte("\x05\x05hello\x06\x05there\xa5\x03\xc6\x00\xe5\x00"), 0, 0, "secretvalue123456")
	f.Add("", "", []byte{}, 1, 1, "")
	f.Add("task", "  ", []byte("\x05\xffxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\x06\x02ok"), 400, 100, "abcdefghijklmnop")
	f.Add("日本語", "é", []byte("\x05\x09日本語\x06\x04\xff\xfe\xfd\xfc\x0d\x01a\x09\x01b"), 500, 120, "ZZZZZZZZZZZZZZZZ")
	f.Fuzz(func(t *testing.T, task, ending string, script []byte, maxChars, maxMsg int, secret string) {
		defer watchdog()()
		secret = alnumSecret(secret)
		checkConversation(t, task, ending, decodeEvents(script, secret), fuzzLimits(maxChars, maxMsg, secret), secret)
	})
}

func FuzzHandoffPrompt(f *testing.F) {
	f.Add("Title", "mission", "report", "evidence", "instruction", " M a.go", []byte("\x05\x05hello\x06\x05there"), 0, "secretvalue123456")
	f.Add("", "", "", "", "", "", []byte{}, 1, "")
	f.Add("t", strings.Repeat("m", 900), strings.Repeat("r\n", 500), strings.Repeat("e", 300), "i", "s",
		[]byte("\xa5\x05\x06\x10xxxxxxxxxxxxxxxx"), 4500, "abcdefghijklmnop")
	f.Fuzz(func(t *testing.T, title, mission, report, evidence, instr, status string, script []byte, total int, secret string) {
		defer watchdog()()
		secret = alnumSecret(secret)
		s := " " + secret + " "
		lim := fuzzLimits(total, total/7, secret)
		in := HandoffInput{
			Title:   title + s,
			Source:  store.Session{ID: baton.SessionID(secret), Config: baton.EngineConfig{Engine: "claude", Model: title}},
			Mission: mission + s,
			Report:  report + s,
			Instructions: []store.Instruction{{ID: "ins_1", State: "queued", Text: instr + s}, {ID: baton.InstructionID(instr), Text: evidence + status},
				{State: store.InstructionState(instr), Text: strings.Repeat(evidence, 3)}},
			Conversation: Input{Task: mission, Ending: instr, Events: slices.Values(decodeEvents(script, secret))},
			Limits: HandoffLimits{MaxChars: abs(total) % 70000, MissionChars: abs(total) % 5000, InstructionChars: abs(total) % 9000,
				Conversation: lim},
		}
		out := HandoffPrompt(in)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 output: %q", out)
		}
		if n, max := utf8.RuneCountInString(out), in.Limits.normalized().MaxChars; n > max {
			t.Fatalf("prompt is %d runes, budget %d", n, max)
		}
		if again := HandoffPrompt(in); again != out {
			t.Fatalf("not deterministic:\n%s", cmp.Diff(out, again))
		}
		if strings.Contains(out, fuzzToken) {
			t.Fatalf("token leaked:\n%s", out)
		}
		if len(secret) >= 12 && !strings.Contains(templateText, secret) && strings.Contains(out, secret) {
			t.Fatalf("secret %q leaked:\n%s", secret, out)
		}
		// The newest message's first line is there unless the section gave way.
		if kept := refCoalesceKept(mission, decodeEvents(script, secret), lim); len(kept) > 0 &&
			!strings.Contains(out, "## Conversation so far\n\n"+omittedSection) {
			first, _, _ := strings.Cut(kept[len(kept)-1], "\n")
			if r := []rune(first); len(r) > 20 {
				first = string(r[:20])
			}
			if !strings.Contains(out, "\n> "+first) {
				t.Fatalf("newest message %q missing:\n%s", first, out)
			}
		}
	})
}

// TestConversationMatchesReference runs the fuzz properties on random
// transcripts, so that the normal test run covers more than the seeds.
func TestConversationMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"a", "b", " ", "\n", "é", "日", "DONE", "<<STOP>>", "END", "\xff", "heartbeat", "sk-", "ghp_"}
	for i := range 400 {
		script := make([]byte, 0, 256)
		for range rng.IntN(40) {
			op := byte(rng.IntN(256))
			var text strings.Builder
			for range rng.IntN(60) {
				text.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			n := min(text.Len(), 255)
			script = append(script, op, byte(n))
			script = append(script, text.String()[:n]...)
		}
		secret := alnumSecret(strings.Repeat(string(rune('a'+i%26)), 12+i%9))
		lim := fuzzLimits(rng.IntN(3000), rng.IntN(800), secret)
		checkConversation(t, "task", "", decodeEvents(script, secret), lim, secret)
	}
}
