-- baton's store tables. Every record kind has a table with one column per
-- field; ord numbers rows in insert order (the lists' "oldest first").
-- Nothing is ever deleted.
--
-- The tables whose rows are rewritten by every transition leave room in
-- each page (fillfactor) so that an update can stay on its page (a HOT
-- update, which writes no index entry).

CREATE TABLE workspaces (
	id                 text PRIMARY KEY,
	ord                bigint GENERATED ALWAYS AS IDENTITY,
	name               text NOT NULL,
	mission            text NOT NULL,
	root               text NOT NULL,
	config             jsonb NOT NULL,
	current_session    text NOT NULL,
	activation_counter bigint NOT NULL,
	-- What package session keeps to find a workspace's current session
	-- without reading its sessions: the running list and the head of the
	-- ranking list here, the rank links on each session.
	running            text[] NOT NULL DEFAULT '{}',
	rank_head          text NOT NULL DEFAULT '',
	ranked             boolean NOT NULL DEFAULT false,
	archived           boolean NOT NULL,
	created_at         timestamptz NOT NULL,
	updated_at         timestamptz NOT NULL,
	-- What a transfer's briefing carries to the target besides the record
	-- ('' means the default: the conversation and the report).
	share              text NOT NULL DEFAULT '',
	-- The context-pressure policy (store.PressurePolicy).
	pressure           jsonb NOT NULL DEFAULT '{}'
) WITH (fillfactor = 70);

CREATE TABLE sessions (
	id               text PRIMARY KEY,
	seq              bigint GENERATED ALWAYS AS IDENTITY,
	workspace        text NOT NULL,
	config           jsonb NOT NULL,
	native_id        text NOT NULL,
	status           text NOT NULL,
	activation_order bigint NOT NULL,
	started_at       timestamptz NOT NULL,
	ended_at         timestamptz NOT NULL,
	end_reason       text NOT NULL,
	created_at       timestamptz NOT NULL,
	rank_above       text NOT NULL DEFAULT '',
	rank_below       text NOT NULL DEFAULT '',
	-- What the session's engine reported it really ran: the model (an agent
	-- CLI may send another than the configured one) and its own version.
	actual_model     text NOT NULL DEFAULT '',
	engine_version   text NOT NULL DEFAULT '',
	-- The context usage after the session's latest turn that reported it:
	-- the tokens in context, the window's size (0 when unknown) and the
	-- launch whose turn reported it (store.Session.Usage); and where the
	-- workspace's context-pressure policy stands for the session.
	context_tokens   bigint NOT NULL DEFAULT 0,
	context_window   bigint NOT NULL DEFAULT 0,
	usage_launch     text NOT NULL DEFAULT '',
	pressure         text NOT NULL DEFAULT ''
) WITH (fillfactor = 70);
CREATE INDEX sessions_by_workspace ON sessions (workspace, seq);

CREATE TABLE handoffs (
	id                  text PRIMARY KEY,
	ord                 bigint GENERATED ALWAYS AS IDENTITY,
	workspace           text NOT NULL,
	request_id          text NOT NULL,
	fingerprint         text NOT NULL,
	state               text NOT NULL,
	attempt             bigint NOT NULL,
	source_session      text NOT NULL,
	target_session      text NOT NULL,
	source_config       jsonb NOT NULL,
	target_config       jsonb NOT NULL,
	generate_summary    boolean NOT NULL,
	native              boolean NOT NULL,
	report              text NOT NULL,
	report_path         text NOT NULL,
	facts               text NOT NULL,
	generation_token    bytea NOT NULL,
	generation_deadline timestamptz NOT NULL,
	error               text NOT NULL,
	stop_requested      boolean NOT NULL,
	stop_unconfirmed    boolean NOT NULL,
	history             jsonb NOT NULL,
	created_at          timestamptz NOT NULL,
	updated_at          timestamptz NOT NULL,
	share               text NOT NULL DEFAULT '',
	-- Why baton started the transfer by itself (store.HandoffReason).
	reason              jsonb NOT NULL DEFAULT '{}'
) WITH (fillfactor = 70);
-- One handoff per (workspace, request id): the idempotency key.
CREATE UNIQUE INDEX handoffs_by_request ON handoffs (workspace, request_id);
-- The pending slot: at most one pending handoff per workspace, and the
-- index that lists the pending handoffs in O(pending).
CREATE UNIQUE INDEX handoffs_pending ON handoffs (workspace)
	WHERE state NOT IN ('', 'completed', 'cancelled');
CREATE INDEX handoffs_by_workspace ON handoffs (workspace, ord);

CREATE TABLE reservations (
	workspace     text PRIMARY KEY,
	held          boolean NOT NULL,
	handoff       text NOT NULL,
	owner         bytea NOT NULL,
	epoch         bigint NOT NULL,
	lease_holder  text NOT NULL,
	lease_expires timestamptz NOT NULL,
	lease_store   text NOT NULL,
	updated_at    timestamptz NOT NULL
) WITH (fillfactor = 70);

CREATE TABLE wakeups (
	id         text PRIMARY KEY,
	workspace  text NOT NULL,
	session    text NOT NULL,
	prompt     text NOT NULL,
	at         timestamptz NOT NULL,
	status     text NOT NULL,
	reason     text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
CREATE INDEX wakeups_by_workspace ON wakeups (workspace, at, id);
CREATE INDEX wakeups_by_session ON wakeups (session, at, id);
CREATE INDEX wakeups_due ON wakeups (at, id) WHERE status = 'pending';

CREATE TABLE continuations (
	id         text PRIMARY KEY,
	ord        bigint GENERATED ALWAYS AS IDENTITY,
	workspace  text NOT NULL,
	session    text NOT NULL,
	task       text NOT NULL,
	ending     text NOT NULL,
	prompt     text NOT NULL,
	target     jsonb NOT NULL,
	automated  boolean NOT NULL,
	state      text NOT NULL,
	reason     text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
CREATE INDEX continuations_by_workspace ON continuations (workspace, ord);
CREATE INDEX continuations_queued ON continuations (ord) WHERE state = 'queued';

CREATE TABLE launches (
	id         text PRIMARY KEY,
	ord        bigint GENERATED ALWAYS AS IDENTITY,
	workspace  text NOT NULL,
	session    text NOT NULL,
	handoff    text NOT NULL,
	attempt    bigint NOT NULL,
	holder     text NOT NULL,
	host       text NOT NULL,
	engine     text NOT NULL,
	epoch      bigint NOT NULL,
	-- Every process of the launch is confirmed gone (false: live).
	gone       boolean NOT NULL,
	-- A launch started in two phases is admitted (after its spawn, before
	-- its agent runs) by a transaction that finds it still fenced in.
	admitted   boolean NOT NULL DEFAULT false,
	end_reason text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
) WITH (fillfactor = 70);
CREATE INDEX launches_live ON launches (ord) WHERE NOT gone;
CREATE INDEX launches_live_by_workspace ON launches (workspace, ord) WHERE NOT gone;

CREATE TABLE instructions (
	id         text PRIMARY KEY,
	ord        bigint GENERATED ALWAYS AS IDENTITY,
	workspace  text NOT NULL,
	text       text NOT NULL,
	state      text NOT NULL,
	session    text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
) WITH (fillfactor = 70);
CREATE INDEX instructions_by_workspace ON instructions (workspace, ord);
-- The open instructions of a workspace (pending or unknown: those the
-- agent may not have received), which every turn reads.
CREATE INDEX instructions_open ON instructions (workspace, ord) WHERE state IN ('pending', 'unknown');

-- The change feed, each entry with its record as JSON (the Go encoding of
-- the store record). A workspace's Seqs run 1, 2, 3... in commit order:
-- a commit numbers its changes from the highest Seq of the workspace,
-- under the workspace's lock.
CREATE TABLE changes (
	workspace text NOT NULL,
	seq       bigint NOT NULL,
	kind      text NOT NULL,
	record    json NOT NULL,
	PRIMARY KEY (workspace, seq)
);
