package recap

// SessionRef names the source session of a transfer.
type SessionRef struct {
	ID       string // baton's session id
	Engine   string
	Model    string
	NativeID string // the engine's own id; empty when it never minted one
}

// Task is one task of the mission, as the record knows it.
type Task struct {
	Title  string
	Status string // for example "done", "in progress", "blocked"
	// Evidence is how the status was verified: the checks actually run and
	// their results. Empty means unverified, and the prompt says so.
	Evidence string
}

// Instruction is a pending instruction from the user, not yet acted on.
type Instruction struct {
	ID    string
	State string // for example "queued", "delivered"
	Text  string
}

// GitState is the working tree as the record last saw it.
type GitState struct {
	Branch   string
	Base     string
	Status   string // for example the output of git status --short
	Diffstat string // for example the output of git diff --stat BASE
}

// HandoffInput is what HandoffPrompt briefs a transfer's target from.
type HandoffInput struct {
	Title  string
	Source SessionRef
	// Mission is the workspace's mission. When it is blank,
	// Conversation.Task stands in for it.
	Mission string
	// Report is the source's LLM report, included verbatim (it is Markdown
	// written for the target). Blank means none was made, and the prompt
	// says so.
	Report string
	// Facts are the mechanical facts of the workspace gathered without a
	// model (git state, checks run), as Markdown; they are quoted like any
	// recorded text. Blank leaves the section out.
	Facts        string
	Tasks        []Task
	Instructions []Instruction // the pending ones, in the order to handle them
	Git          GitState
	// Conversation is the source conversation, replayed as Conversation
	// does; its Ending says how the source session ended.
	Conversation Input
	Limits       HandoffLimits
}

// HandoffLimits bounds a handoff prompt, in runes. Zero or negative values
// mean the defaults; a section budget below MinSectionChars counts as
// MinSectionChars, a total below MinHandoffChars as MinHandoffChars.
type HandoffLimits struct {
	MaxChars         int // the whole prompt
	MissionChars     int
	ReportChars      int
	TaskChars        int
	InstructionChars int
	GitChars         int
	FactsChars       int
	// Conversation bounds the replay section (MaxChars) and its messages
	// (MaxMessageChars; the ending too). Its Secrets and Markers apply to
	// every section of the prompt, not only the replay.
	Conversation Limits
}

// Budgets of a handoff prompt, in runes. A section's budget bounds its
// content, heading excluded. The default total exceeds the sum of the
// default sections and the fixed text, so with the defaults no section is
// ever squeezed.
const (
	DefaultHandoffChars     = 160000
	DefaultMissionChars     = 32000
	DefaultReportChars      = 24100 // a report may have 24,000 characters; it is never clipped
	DefaultTaskChars        = 48000
	DefaultInstructionChars = 24000
	DefaultGitChars         = 8000
	DefaultFactsChars       = 8000
	// MinSectionChars is the smallest section budget.
	MinSectionChars = 300
	// MinHandoffChars is the smallest total: room for the fixed text and a
	// line per section.
	MinHandoffChars = 4000
)

func (l HandoffLimits) normalized() HandoffLimits {
	return HandoffLimits{
		MaxChars:         clampLimit(l.MaxChars, DefaultHandoffChars, MinHandoffChars),
		MissionChars:     clampLimit(l.MissionChars, DefaultMissionChars, MinSectionChars),
		ReportChars:      clampLimit(l.ReportChars, DefaultReportChars, MinSectionChars),
		TaskChars:        clampLimit(l.TaskChars, DefaultTaskChars, MinSectionChars),
		InstructionChars: clampLimit(l.InstructionChars, DefaultInstructionChars, MinSectionChars),
		GitChars:         clampLimit(l.GitChars, DefaultGitChars, MinSectionChars),
		FactsChars:       clampLimit(l.FactsChars, DefaultFactsChars, MinSectionChars),
		Conversation: Limits{
			MaxChars:        l.Conversation.maxChars(),
			MaxMessageChars: l.Conversation.maxMessageChars(),
			Markers:         l.Conversation.Markers,
			Secrets:         l.Conversation.Secrets,
		},
	}
}

// Lengths of the one-line fields, in runes.
const (
	titleChars = 200
	fieldChars = 120
)
