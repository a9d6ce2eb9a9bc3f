// Package recap builds the briefings that let a fresh agent session pick up
// work it does not remember: the replay of a previous conversation that
// opens a continuation (Conversation), and the prompt a session transfer's
// target opens with (HandoffPrompt).
//
// The package is pure: no I/O, no clock, no store (it reads the records
// package store defines, never a store). Its functions are total:
// they never fail and never panic, whatever the input (invalid UTF-8
// included; a panicking iterator aside), and the same input gives the same
// string, byte for byte. There are no errors to export.
//
// # Basics
//
// A briefing says first that this is a NEW session and that what follows is
// history; then it states the task once, how the previous session ended
// when that is known, the conversation so far, and last a line telling the
// agent to re-establish context from the working tree before acting. Every
// recorded text is quoted line by line behind "> ", so nothing recorded can
// pass for a heading or a speaker's label; only the handoff report,
// Markdown the source wrote for its successor, is included verbatim.
//
// The replay keeps the user and agent messages of normal turns (a
// report-only turn is not conversation): tool calls, lifecycle lines,
// notes, blank text and heartbeats are dropped; consecutive chunks of one
// speaker are joined; control markers (Limits.Markers, a trailing DONE say)
// are stripped; secrets are redacted; each message is clipped to
// Limits.MaxMessageChars; and the oldest messages are dropped, and counted,
// until the rest fits Limits.MaxChars. The newest message is never
// dropped. A replay without events (Input.Events nil) says the conversation
// was not included, why (Input.Omitted) and where to read it
// (Input.HistoryTool).
//
// Redaction replaces with baton.Redacted every Limits.Secrets value and
// every built-in token shape (GitHub, Anthropic, OpenAI, AWS, Google, Slack,
// GitLab), in every section of a briefing. A caller that shows recorded
// text on its own terms (a page of a conversation served to an agent)
// applies the same rules with a Cleaner, and joins chunks with isBlank and
// IsHeartbeat as the replay does.
//
// Budgets count runes of rendered text (quoting and labels included);
// texts are clipped at rune boundaries with a " [… truncated]" mark.
// Conversation reads its events once, in one pass, in memory
// O(MaxChars + MaxMessageChars) whatever the transcript's length.
//
// # Caveats
//
// A secret is recognised only where it appears whole in one message once
// its chunks are joined: one split across two messages, or across a tool
// call, is not redacted (nor does it appear whole). A short secret
// redacts ordinary words as well. For a message longer than its clip limit only the part read is
// seen, so a marker pattern anchored at the end ($) matches the end of
// that part. A streamed chunk that is exactly a heartbeat phrase is
// dropped even inside a longer sentence. DESIGN.md beside this package
// has the details and the costs.
package recap
