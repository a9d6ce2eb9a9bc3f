-- A launch started in two phases is admitted (after its spawn, before its
-- agent runs) by a transaction that finds it still fenced in.
ALTER TABLE launches ADD COLUMN admitted boolean NOT NULL DEFAULT false;
