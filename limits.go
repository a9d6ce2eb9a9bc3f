package baton

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field names a caller-supplied value that baton stores or hands to an
// engine. Every such value has a limit and a rule, checked by CheckField
// at the SDK's entry points (session.Service, handoff.Coordinator,
// EngineConfig.Validate), so every host gets the same answer for the same
// input, whatever front end it puts before baton:
//
//	field            limit                               rule
//	workspaceId      1..128 bytes after trimming         id
//	requestId        1..128 bytes after trimming         id
//	name             at most 200 characters              line
//	mission          at most 20,000 characters           text
//	root             at most 4,096 bytes                 line
//	prompt           1..200,000 bytes (not all blank)    text   (a start, a wakeup, a continuation)
//	message          1..200,000 bytes (not all blank)    text
//	task, ending     at most 200,000 bytes               text   (a continuation)
//	report           1..24,000 characters after trimming text
//	engine           1..128 bytes                        word
//	model            at most 128 bytes                   word
//	reasoningEffort  at most 128 bytes                   word
//	permissionMode   at most 128 bytes                   word
//	account          at most 128 bytes                   word
//
// Every value must be valid UTF-8: invalid bytes are refused, never
// replaced. The rules: an id has no control character (see ValidID); a
// line has no control character at all; a text may hold tabs and line
// breaks but no other control character; a word (a value an engine may
// pass on a command line) holds no white space and no control character
// and does not start with '-', so that no value is ever read as a flag
// (a model named "--dangerously-skip-permissions" is refused). Characters
// are Unicode code points. A refusal matches ErrInvalid and names the
// field and its limit.
type Field string

// The fields of the table above.
const (
	FieldWorkspaceID     Field = "workspaceId"
	FieldRequestID       Field = "requestId"
	FieldName            Field = "name"
	FieldMission         Field = "mission"
	FieldRoot            Field = "root"
	FieldPrompt          Field = "prompt"
	FieldMessage         Field = "message"
	FieldTask            Field = "task"
	FieldEnding          Field = "ending"
	FieldReport          Field = "report"
	FieldEngine          Field = "engine"
	FieldModel           Field = "model"
	FieldReasoningEffort Field = "reasoningEffort"
	FieldPermissionMode  Field = "permissionMode"
	FieldAccount         Field = "account"
)

// Limits of the table above, for callers that show them.
const (
	maxNameChars    = 200
	maxMissionChars = 20_000
	maxRootBytes    = 4096
	MaxPromptBytes  = 200_000
	MaxReportChars  = 24_000
)

// rule is what a value may hold besides its length (see Field).
type rule int

// The rules of the table of Field.
const (
	ruleID rule = iota
	ruleLine
	ruleText
	ruleWord
)

// fieldLimit is one row of the table of Field.
type fieldLimit struct {
	// Max is the longest value, in Unit.
	Max int
	// Chars says Max counts characters (code points), not bytes.
	Chars bool
	// Required refuses an empty (or, for text, all-blank) value.
	Required bool
	rule     rule
}

// String says the limit as an error message does ("1..200 characters").
func (l fieldLimit) String() string {
	unit := " bytes"
	if l.Chars {
		unit = " characters"
	}
	if l.Required {
		return "1.." + strconv.Itoa(l.Max) + unit
	}
	return "at most " + strconv.Itoa(l.Max) + unit
}

var limits = map[Field]fieldLimit{
	FieldWorkspaceID:     {Max: MaxIDLen, Required: true, rule: ruleID},
	FieldRequestID:       {Max: MaxIDLen, Required: true, rule: ruleID},
	FieldName:            {Max: maxNameChars, Chars: true, rule: ruleLine},
	FieldMission:         {Max: maxMissionChars, Chars: true, rule: ruleText},
	FieldRoot:            {Max: maxRootBytes, rule: ruleLine},
	FieldPrompt:          {Max: MaxPromptBytes, Required: true, rule: ruleText},
	FieldMessage:         {Max: MaxPromptBytes, Required: true, rule: ruleText},
	FieldTask:            {Max: MaxPromptBytes, rule: ruleText},
	FieldEnding:          {Max: MaxPromptBytes, rule: ruleText},
	FieldReport:          {Max: MaxReportChars, Chars: true, Required: true, rule: ruleText},
	FieldEngine:          {Max: MaxIDLen, Required: true, rule: ruleWord},
	FieldModel:           {Max: MaxIDLen, rule: ruleWord},
	FieldReasoningEffort: {Max: MaxIDLen, rule: ruleWord},
	FieldPermissionMode:  {Max: MaxIDLen, rule: ruleWord},
	FieldAccount:         {Max: MaxIDLen, rule: ruleWord},
}

// CheckField checks v against f's row of the table (see Field) and
// returns an error matching ErrInvalid that names the field and its limit,
// or nil. Ids are checked as they are stored: trimmed (callers trim them
// first); a report is checked trimmed. An unknown field is refused.
func CheckField(f Field, v string) error {
	l, ok := limits[f]
	if !ok {
		return Errorf(ErrInvalid, "unknown field %q", f)
	}
	if !utf8.ValidString(v) {
		return Errorf(ErrInvalid, "%s is not valid UTF-8", f)
	}
	switch l.rule {
	case ruleID:
		v = strings.TrimSpace(v)
	case ruleText:
		if f == FieldReport {
			v = strings.TrimSpace(v)
		}
	}
	n := len(v)
	if l.Chars {
		n = utf8.RuneCountInString(v)
	}
	blank := strings.TrimSpace(v) == ""
	switch {
	case l.Required && blank:
		return Errorf(ErrInvalid, "%s is required (%s)", f, l)
	case n > l.Max:
		return Errorf(ErrInvalid, "%s is over its limit: %s (got %d)", f, l, n)
	}
	for i, r := range v {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			if l.rule == ruleText {
				continue
			}
			return Errorf(ErrInvalid, "%s must be one line without control characters or tabs", f)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return Errorf(ErrInvalid, "%s holds a control character (U+%04X)", f, r)
		case l.rule == ruleWord && unicode.IsSpace(r):
			return Errorf(ErrInvalid, "%s must not hold white space", f)
		case l.rule == ruleWord && i == 0 && r == '-':
			return Errorf(ErrInvalid, "%s must not start with '-' (it would read as a command-line flag)", f)
		}
	}
	return nil
}
