package recap

import "github.com/batonhq/baton/store"

// HandoffInput is what HandoffPrompt briefs a transfer's target from.
type HandoffInput struct {
	Title string
	// Source is the source session; the prompt names its id, engine,
	// engine version, model (the one that really ran, with the configured
	// Config.Model beside it when they differ) and native id. The zero
	// Session stands for an unknown source.
	Source store.Session
	// Mission is the workspace's mission. When it is blank,
	// Conversation.Task stands in for it.
	Mission string
	// Report is the source's LLM report, included verbatim (it is Markdown
	// written for the target). Blank means none was made, and the prompt
	// says so.
	Report string
	// ReportOmitted, when not blank, says why the source's report is not
	// included (a short phrase flattened onto one line, for example "the
	// user chose not to share it"): Report is then ignored, and the prompt
	// says that a report exists but was left out.
	ReportOmitted string
	// Facts are the mechanical facts of the workspace gathered without a
	// model (git state, checks run), as Markdown; they are quoted like any
	// recorded text. Blank leaves the section out.
	Facts        string
	Instructions []store.Instruction // the pending ones, in the order to handle them
	// Conversation is the source conversation, replayed as Conversation
	// does; its Ending says how the source session ended.
	Conversation Input
	Limits       HandoffLimits
}

// HandoffLimits bounds a handoff prompt, in runes. Zero or negative values
// mean the defaults (below); a section budget under 300 counts as 300, a
// total under 4,000 as 4,000.
type HandoffLimits struct {
	MaxChars         int // the whole prompt; default 160,000
	MissionChars     int // default 32,000
	ReportChars      int // default 24,100: a report of 24,000 is never clipped
	InstructionChars int // default 24,000
	FactsChars       int // default 8,000
	// Conversation bounds the replay section (MaxChars) and its messages
	// (MaxMessageChars; the ending too). Its Secrets and Markers apply to
	// every section of the prompt, not only the replay.
	Conversation Limits
}

// Floors of a handoff prompt's budgets, in runes. A section's budget
// bounds its content, heading excluded. The default total (the field
// comments of HandoffLimits give the defaults) exceeds the sum of the
// default sections and the fixed text, so with the defaults no section is
// ever squeezed.
const (
	// minSectionChars is the smallest section budget.
	minSectionChars = 300
	// minHandoffChars is the smallest total: room for the fixed text and a
	// line per section.
	minHandoffChars = 4000
	// defaultHandoffChars is the default total.
	defaultHandoffChars = 160000
)

func (l HandoffLimits) normalized() HandoffLimits {
	c := l.Conversation
	c.MaxChars, c.MaxMessageChars = c.maxChars(), c.maxMessageChars()
	return HandoffLimits{
		MaxChars:         clampLimit(l.MaxChars, defaultHandoffChars, minHandoffChars),
		MissionChars:     clampLimit(l.MissionChars, 32000, minSectionChars),
		ReportChars:      clampLimit(l.ReportChars, 24100, minSectionChars),
		InstructionChars: clampLimit(l.InstructionChars, 24000, minSectionChars),
		FactsChars:       clampLimit(l.FactsChars, 8000, minSectionChars),
		Conversation:     c,
	}
}

// Lengths of the one-line fields, in runes.
const (
	titleChars = 200
	fieldChars = 120
)
