-- Row versions for the rows a transition reads (workspaces, reservations,
-- handoffs), which each Store keeps in a cache across transactions: a
-- transaction that answers a read from the cache checks, in its next
-- statement batch, that each such row still has the version it assumed
-- (stale_row).
--
-- Every insert and update of those rows, by this package or by anything
-- else (an older pgstore still running, an operator's psql), draws a new
-- version from one sequence, by trigger: a row's versions grow, and a
-- version is never drawn twice, so a row deleted and created again cannot
-- be taken for the one a cache holds. Rows written before this migration
-- keep version 0 until their next write.
CREATE SEQUENCE row_versions;

ALTER TABLE workspaces ADD COLUMN version bigint NOT NULL DEFAULT 0;
ALTER TABLE reservations ADD COLUMN version bigint NOT NULL DEFAULT 0;
ALTER TABLE handoffs ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- The trigger names the sequence with its schema, resolved now: a writer
-- whose search_path lacks the schema still draws from it.
DO $migration$
BEGIN
	EXECUTE format($f$
		CREATE FUNCTION next_row_version() RETURNS trigger LANGUAGE plpgsql AS $body$
		BEGIN
			NEW.version := nextval(%L::regclass);
			RETURN NEW;
		END
		$body$
	$f$, quote_ident(current_schema()) || '.row_versions');
END
$migration$;

CREATE TRIGGER workspaces_version BEFORE INSERT OR UPDATE ON workspaces
	FOR EACH ROW EXECUTE FUNCTION next_row_version();
CREATE TRIGGER reservations_version BEFORE INSERT OR UPDATE ON reservations
	FOR EACH ROW EXECUTE FUNCTION next_row_version();
CREATE TRIGGER handoffs_version BEFORE INSERT OR UPDATE ON handoffs
	FOR EACH ROW EXECUTE FUNCTION next_row_version();

-- stale_row raises SQLSTATE BT001, naming a cached row whose version
-- changed. The store checks each row a transaction took from its cache
-- with a statement (checkSQL in tx.go) that reads the row's version and
-- calls stale_row if it is not the one assumed; the error aborts the
-- transaction, and the server skips the rest of the statement batch, its
-- COMMIT included.
CREATE FUNCTION stale_row(kind text, id text, cached bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'pgstore: the cached % % changed since version %', kind, id, cached
		USING ERRCODE = 'BT001';
END
$$;
