package recap

import (
	"iter"
	"regexp"
	"strconv"
)

// Speaker says who wrote an event. The zero value is no speaker: an event
// without a known speaker is never replayed, so a producer that forgets to set
// it leaks nothing.
type Speaker int

const (
	// User is the person driving the session.
	User Speaker = iota + 1
	// Agent is the engine's model.
	Agent
)

// String returns "User", "Agent", or "Speaker(n)" for an unknown value.
func (s Speaker) String() string {
	switch s {
	case User:
		return "User"
	case Agent:
		return "Agent"
	}
	return "Speaker(" + strconv.Itoa(int(s)) + ")"
}

// Kind says what an event is. Only Message events are replayed; the zero
// value and unknown kinds are dropped like notes.
type Kind int

const (
	// Message is conversation text, usually one streamed chunk of a message.
	Message Kind = iota + 1
	// ToolCall is a tool invocation or its output. Never replayed; it marks
	// a boundary inside a message (see Conversation).
	ToolCall
	// Lifecycle is a line about the session itself (started, stopped,
	// resumed). Never replayed.
	Lifecycle
	// Note is an annotation of the record (for example "a fresh session was
	// seeded"). Never replayed.
	Note
)

// String returns the kind's name, or "Kind(n)" for an unknown value.
func (k Kind) String() string {
	switch k {
	case Message:
		return "Message"
	case ToolCall:
		return "ToolCall"
	case Lifecycle:
		return "Lifecycle"
	case Note:
		return "Note"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one recorded event of a conversation.
type Event struct {
	Speaker Speaker
	Kind    Kind
	Text    string
}

// Input is what Conversation replays.
type Input struct {
	// Task is the original task, stated once in the briefing.
	Task string
	// Ending says how the previous attempt ended (for example the error that
	// killed it). Blank means unknown, and the section is left out.
	Ending string
	// Events yields the previous conversation in order. It is ranged over
	// exactly once; nil means no events.
	Events iter.Seq[Event]
}

// Limits bounds a replay and says what to remove from it. The zero value
// gives the defaults and removes only the built-in secret shapes.
type Limits struct {
	// MaxChars bounds the rendered conversation part of a replay, in
	// characters (runes). Zero or negative means DefaultMaxChars; a value
	// below MinMaxChars counts as MinMaxChars.
	MaxChars int
	// MaxMessageChars bounds each message's text, truncation mark included,
	// in characters (runes). Zero or negative means DefaultMaxMessageChars;
	// a value below MinMessageChars counts as MinMessageChars.
	MaxMessageChars int
	// Markers are control markers to strip from every replayed text (for
	// example regexp.MustCompile(`\s*DONE\s*$`)). Every match is removed;
	// the list is applied repeatedly (at most 16 passes) until nothing
	// matches, so "DONE DONE" loses both. Nil entries are ignored.
	Markers []*regexp.Regexp
	// Secrets are values to redact besides the built-in token shapes, for
	// example SecretValuesFromEnv(os.Environ()). Blank values are ignored;
	// every other value is redacted as given, however short.
	Secrets []string
}

// Defaults and floors of the limits, in characters (runes).
const (
	DefaultMaxChars        = 12000
	DefaultMaxMessageChars = 2000
	// MinMaxChars is the smallest replay budget: it always leaves room for
	// the omission note and the beginning of the newest message.
	MinMaxChars = 400
	// MinMessageChars is the smallest per-message clip.
	MinMessageChars = 100
	// MinEnvSecretChars is the shortest environment value
	// SecretValuesFromEnv treats as a secret.
	MinEnvSecretChars = 12
)

// Marks the builders put in the text they replay.
const (
	// Redacted replaces every secret.
	Redacted = "[REDACTED]"
	// TruncationMark ends a text that was clipped.
	TruncationMark = " [… truncated]"
)

// markRunes is the length of TruncationMark in runes.
const markRunes = 14

// clampLimit applies the zero-means-default and floor rules of a limit.
func clampLimit(v, def, floor int) int {
	if v <= 0 {
		return def
	}
	return max(v, floor)
}

func (l Limits) maxChars() int { return clampLimit(l.MaxChars, DefaultMaxChars, MinMaxChars) }

func (l Limits) maxMessageChars() int {
	return clampLimit(l.MaxMessageChars, DefaultMaxMessageChars, MinMessageChars)
}
