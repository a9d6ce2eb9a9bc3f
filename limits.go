package baton

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the table of CheckField, for callers that show them.
const (
	MaxPromptBytes = 200_000
	MaxReportChars = 24_000
)

// rule is what a value may hold besides its length (see CheckField).
type rule int

// The rules of the table of CheckField.
const (
	ruleID rule = iota
	ruleLine
	ruleText
	ruleWord
)

// fieldLimit is one row of the table of CheckField.
type fieldLimit struct {
	// Max is the longest value, in bytes or (Chars) characters.
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

var limits = map[string]fieldLimit{
	"workspaceId":     {Max: MaxIDLen, Required: true, rule: ruleID},
	"requestId":       {Max: MaxIDLen, Required: true, rule: ruleID},
	"id":              {Max: MaxIDLen, Required: true, rule: ruleID},
	"name":            {Max: 200, Chars: true, rule: ruleLine},
	"mission":         {Max: 20_000, Chars: true, rule: ruleText},
	"root":            {Max: 4096, rule: ruleLine},
	"prompt":          {Max: MaxPromptBytes, Required: true, rule: ruleText},
	"message":         {Max: MaxPromptBytes, Required: true, rule: ruleText},
	"task":            {Max: MaxPromptBytes, rule: ruleText},
	"ending":          {Max: MaxPromptBytes, rule: ruleText},
	"report":          {Max: MaxReportChars, Chars: true, Required: true, rule: ruleText},
	"engine":          {Max: MaxIDLen, Required: true, rule: ruleWord},
	"model":           {Max: MaxIDLen, rule: ruleWord},
	"reasoningEffort": {Max: MaxIDLen, rule: ruleWord},
	"permissionMode":  {Max: MaxIDLen, rule: ruleWord},
	"account":         {Max: MaxIDLen, rule: ruleWord},
}

// CheckField checks a caller-supplied value that baton stores or hands to
// an engine against its row of this table, as the SDK's entry points do
// (session.Service, handoff.Coordinator, EngineConfig.Validate), so every
// host gets the same answer for the same input, whatever front end it puts
// before baton:
//
//	field            limit                               rule
//	workspaceId      1..128 bytes after trimming         id
//	requestId        1..128 bytes after trimming         id
//	id               1..128 bytes after trimming         id     (any other caller-chosen id)
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
// replaced. The rules: an id has no control character; a
// line has no control character at all; a text may hold tabs and line
// breaks but no other control character; a word (a value an engine may
// pass on a command line) holds no white space and no control character
// and does not start with '-', so that no value is ever read as a flag
// (a model named "--dangerously-skip-permissions" is refused). Characters
// are Unicode code points.
//
// f names the row ("prompt", "model", ...). The error matches ErrInvalid
// and names the field and its limit; nil when v keeps them. Ids are
// checked as they are stored: trimmed (callers trim them first); a report
// is checked trimmed. An unknown name is refused, whatever v.
func CheckField(f, v string) error {
	l, ok := limits[f]
	if !ok {
		return Errorf(ErrInvalid, "unknown field %q", f)
	}
	if !utf8.ValidString(v) {
		return Errorf(ErrInvalid, "%s is not valid UTF-8", f)
	}
	if l.rule == ruleID || f == "report" {
		v = strings.TrimSpace(v)
	}
	n := len(v)
	if l.Chars {
		n = utf8.RuneCountInString(v)
	}
	switch {
	case l.Required && strings.TrimSpace(v) == "":
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
