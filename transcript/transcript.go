// Package transcript holds the events of an agent session's conversation, as
// engines record them and briefings replay them.
//
// An Event says who wrote it (Speaker), what it is (Kind) and which turn it
// belongs to (Turn): a Normal turn is conversation, a ReportOnly turn is the
// one turn a transfer's source spends writing its handoff report, and is not
// conversation. The package is a leaf: it imports the standard library only,
// so that engines, the session and handoff packages and the briefing builders
// all share the one type.
package transcript

import "strconv"

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
func (s Speaker) String() string { return name(speakerNames[:], int(s), "Speaker") }

var speakerNames = [...]string{User: "User", Agent: "Agent"}

// Kind says what an event is. Only Message events are replayed; the zero
// value and unknown kinds are dropped like notes.
type Kind int

const (
	// Message is conversation text, usually one streamed chunk of a message.
	Message Kind = iota + 1
	// ToolCall is a tool invocation or its output. Never replayed; it marks
	// a boundary inside a message.
	ToolCall
	// Lifecycle is a line about the session itself (started, stopped,
	// resumed). Never replayed.
	Lifecycle
	// Note is an annotation of the record (for example "a fresh session was
	// seeded"). Never replayed.
	Note
)

// String returns the kind's name, or "Kind(n)" for an unknown value.
func (k Kind) String() string { return name(kindNames[:], int(k), "Kind") }

var kindNames = [...]string{Message: "Message", ToolCall: "ToolCall", Lifecycle: "Lifecycle", Note: "Note"}

// name returns names[i], or typ(i) when i is not a known value.
func name(names []string, i int, typ string) string {
	if i > 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(i) + ")"
}

// Turn says what a turn of a session is for; an engine start
// (engine.StartRequest.Turn) says it of the turn it opens.
type Turn string

const (
	// Normal: an ordinary turn with the session's full tool set. Its events
	// are the session's conversation.
	Normal Turn = "normal"
	// ReportOnly: one turn that may only read and submit a handoff report.
	// Its events (the report prompt and the agent's answer) are not
	// conversation: replays and history pages leave them out unless asked.
	ReportOnly Turn = "report-only"
)

// Event is one recorded event of a conversation.
type Event struct {
	Speaker Speaker
	Kind    Kind
	Text    string
	// Turn is the turn the event belongs to. The zero value counts as
	// Normal: a producer that knows of no report-only turn records none.
	Turn Turn
}
