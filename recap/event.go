package recap

import (
	"iter"
	"regexp"

	"github.com/batonhq/baton/transcript"
)

// Input is what Conversation replays.
type Input struct {
	// Task is the original task, stated once in the briefing.
	Task string
	// Ending says how the previous attempt ended (for example the error that
	// killed it). Blank means unknown, and the section is left out.
	Ending string
	// Events yields the previous conversation in order. It is ranged over
	// exactly once. Events of a report-only turn (transcript.ReportOnly) are
	// not conversation and are left out. Nil means the conversation is not
	// included (none was to be had, or it was withheld): the briefing says
	// so, and where it can be read, never that nothing was exchanged.
	Events iter.Seq[transcript.Event]
	// Omitted says, when Events is nil, why the conversation is not
	// included: a short phrase flattened onto one line, for example "no
	// transcript of it is available here". Blank: "it was not available".
	Omitted string
	// HistoryTool names the tool the reader can call to read the
	// conversation that is not included (for example
	// "read_source_history"); blank when it has none.
	HistoryTool string
}

// Limits bounds a replay and says what to remove from it. The zero value
// gives the defaults and removes only the built-in secret shapes.
type Limits struct {
	// MaxChars bounds the rendered conversation part of a replay, in
	// characters (runes). Zero or negative means 12,000; a value below 400
	// counts as 400.
	MaxChars int
	// MaxMessageChars bounds each message's text, truncation mark included,
	// in characters (runes). Zero or negative means 2,000; a value below 100
	// counts as 100.
	MaxMessageChars int
	// Markers are control markers to strip from every replayed text (for
	// example regexp.MustCompile(`\s*DONE\s*$`)). Every match is removed;
	// the list is applied repeatedly (at most 16 passes) until nothing
	// matches, so "DONE DONE" loses both. Nil entries are ignored.
	Markers []*regexp.Regexp
	// Secrets are values to redact besides the built-in token shapes (API
	// keys, passwords, tokens of the environment). Blank values are
	// ignored; every other value is redacted as given, however short: a
	// value shorter than baton.Redacted makes the text longer, and a short
	// one redacts ordinary words.
	Secrets []string
}

// Floors of the limits, in characters (runes); the defaults are in the
// field comments of Limits.
const (
	// minMaxChars is the smallest replay budget: it always leaves room for
	// the omission note and the beginning of the newest message.
	minMaxChars = 400
	// minMessageChars is the smallest per-message clip.
	minMessageChars = 100
)

// truncationMark ends a text that was clipped; baton.Redacted replaces
// every secret.
const truncationMark = " [… truncated]"

// markRunes is the length of truncationMark in runes.
const markRunes = 14

// clampLimit applies the zero-means-default and floor rules of a limit.
func clampLimit(v, def, floor int) int {
	if v <= 0 {
		return def
	}
	return max(v, floor)
}

func (l Limits) maxChars() int        { return clampLimit(l.MaxChars, 12000, minMaxChars) }
func (l Limits) maxMessageChars() int { return clampLimit(l.MaxMessageChars, 2000, minMessageChars) }
