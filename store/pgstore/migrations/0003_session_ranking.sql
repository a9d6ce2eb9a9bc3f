-- What package session keeps to find a workspace's current session without
-- reading its sessions: the running list and the head of the ranking list
-- on the workspace, the rank links on each session. A workspace migrated
-- from an earlier version reads ranked = false: package session derives
-- the rest on its first write there, or in Reconcile for a long history.
ALTER TABLE workspaces
	ADD COLUMN running   text[]  NOT NULL DEFAULT '{}',
	ADD COLUMN rank_head text    NOT NULL DEFAULT '',
	ADD COLUMN ranked    boolean NOT NULL DEFAULT false;

ALTER TABLE sessions
	ADD COLUMN rank_above text NOT NULL DEFAULT '',
	ADD COLUMN rank_below text NOT NULL DEFAULT '';
