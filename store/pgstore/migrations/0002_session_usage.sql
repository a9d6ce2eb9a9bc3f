-- A session's context usage after its latest turn that reported it: the
-- tokens in context, the window's size (0 when unknown) and the launch
-- whose turn reported it (store.Session.Usage).
ALTER TABLE sessions
	ADD COLUMN context_tokens bigint NOT NULL DEFAULT 0,
	ADD COLUMN context_window bigint NOT NULL DEFAULT 0,
	ADD COLUMN usage_launch   text NOT NULL DEFAULT '';
