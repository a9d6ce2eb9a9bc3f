package engine

// Usage is how full a session's context window is, as the engine reports
// it after a turn (ExitStatus.Usage). It is what the model had in context
// at the turn's last request: that request's whole input, cached or not
// (for Claude Code: input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens of the last assistant message of the main
// conversation; for Codex: the input_tokens of the last request's
// token_count event). The last request's output is not counted: it enters
// the context as input of the next request. Neither is a sum over the
// turn: a turn with a tool loop makes several requests, and each resends
// the conversation so far.
//
// The zero Usage means the engine reported none: an engine that cannot
// tell (or a turn that made no request before it ended) leaves both fields
// zero, and a caller must treat that as unknown, never as an empty
// context.
type Usage struct {
	// Tokens is the number of tokens in context as of the turn's last
	// request; 0 when the engine reported none.
	Tokens int64
	// Window is the size of the model's context window in tokens, as the
	// engine (or its configuration) says; 0 when unknown. Tokens may be
	// reported without it.
	Window int64
}
