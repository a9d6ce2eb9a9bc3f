// Package recap builds the briefings that let a fresh agent session pick up
// work it does not remember: the replay of a previous conversation that
// opens a continuation (Conversation), and the prompt a session transfer's
// target opens with (HandoffPrompt).
//
// The package is pure: no I/O, no clock, no store, the standard library
// only. Its functions are total: they never fail and never panic, whatever
// the input (invalid UTF-8 included; a panicking iterator aside), and the
// same input gives the same string, byte for byte. There are no errors to
// export.
//
// # Basics
//
// A briefing is read by a model that remembers nothing, so it says so first:
// this is a NEW session, and what follows is history. Then it states the
// task once, how the previous session ended when that is known, the
// conversation so far, and last a line telling the agent to re-establish
// context from the working tree before acting. Every recorded text (a
// message, the task, an instruction) is quoted line by line behind "> ", and
// short fields (a title, an id, a status) are flattened onto one line after
// the package's own words, so that every line of a briefing begins with text
// of this package and nothing recorded can pass for a heading or a speaker's
// label. The only exception is the handoff report, Markdown written by the
// source session for its successor, which is included verbatim.
//
// The replay keeps user and agent message text only. Tool calls, lifecycle
// lines, notes, blank text and heartbeat lines are dropped; consecutive
// chunks of one speaker are joined into one message; control markers
// (Limits.Markers, for example a trailing DONE) are stripped, since
// replaying one would close the fresh session; secrets are redacted; each
// message is clipped to Limits.MaxMessageChars; and the oldest messages are
// dropped, and counted ("...3 earlier messages omitted..."), until the rest
// fits Limits.MaxChars. The newest message is never dropped: when it does
// not fit alone it is clipped to what is left.
//
// Redaction replaces with [REDACTED] every occurrence of a Limits.Secrets
// value (SecretValuesFromEnv collects them from an environment) and every
// built-in token shape: GitHub (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_),
// Anthropic and OpenAI (sk-ant-, sk-), AWS (AKIA, ASIA), Google (AIza,
// ya29.), Slack (xox?-) and GitLab (glpat-). Overlapping secrets are
// redacted as one, so neither leaks a piece of the other. It runs before
// anything leaves the record: in the task, the ending, every section of a
// handoff prompt. Markers are stripped between two redaction passes, so that
// a marker can neither eat part of a secret nor join two halves of one.
//
// A caller that shows recorded text on its own terms (a page of a
// conversation served to an agent) applies the same redaction and marker
// rules with a Redactor, and joins chunks with IsBlank and IsHeartbeat as
// the replay does.
//
// Characters are counted as runes (Unicode code points, an invalid byte
// counting as one and coming out as U+FFFD), and texts are clipped at rune
// boundaries, with TruncationMark. Limits.MaxMessageChars bounds a message's
// text, mark included; every other budget bounds rendered text, quoting
// prefixes, labels and notes included: Limits.MaxChars the conversation part
// of a briefing, HandoffLimits each section of a handoff prompt and the
// whole of it.
//
// Conversation reads its events once, through an iterator, in one pass. Its
// memory is O(MaxChars + MaxMessageChars), whatever the length of the
// transcript or of any one message: messages are kept, already redacted and
// clipped, in a window that drops a message as soon as the newer ones alone
// fill the budget, and the message being read is kept only up to its clip
// limit plus a lookahead of 256 bytes (or the longest secret, if longer).
// Messages share one arena: a replay allocates the same for a megabyte as
// for a gigabyte of transcript (about 200 KB with the default limits).
//
// # Caveats
//
// A secret is recognised only where it appears whole in one message once
// its chunks are joined. A secret split across two messages, or across a
// tool call (the replay puts a line break there), is not redacted, but then
// it does not appear whole in the briefing either. Values shorter than
// [Redacted] are redacted as given and make the text longer; SecretValuesFromEnv
// leaves out values under MinEnvSecretChars for that reason.
//
// Markers apply to whole messages once their chunks are joined, so a marker
// split across chunks is stripped. For a message longer than its clip limit,
// only the part read (the clip and the lookahead) is seen: a pattern
// anchored at the end ($, \z) is matched at the end of that part, and may
// strip a marker word that was not really trailing; it never lets a trailing
// marker through, since the tail of a clipped message is not replayed.
// Stripping repeats until nothing matches, at most 16 passes. Patterns of the
// form [class*]LITERAL[class*]$ (`\s*DONE\s*$`) are stripped by a byte scan
// with the regexp's exact result; any other pattern costs a regexp scan of
// every message containing its longest required literal, and a small
// allocation per match.
//
// Heartbeats are recognised chunk by chunk: an event whose every line is a
// known keep-alive phrase ("[heartbeat]", "keep-alive", "Still working…
// (5m)"). A streamed chunk that happens to be exactly such a phrase, as a
// fragment of a longer sentence, is dropped too.
//
// A user message equal to the task (after redaction and clipping) is
// replaced by a reference to it, so that the task is stated once. Omission
// is exact: a message is dropped only if the newer ones leave it no room,
// but the sizes are those of the rendering, so a message full of short lines
// costs more than its characters.
//
// The handoff prompt reads every list whole to count it (tasks, instructions)
// and each text up to its budget plus the lookahead; the strings are the
// caller's, already in memory.
package recap
