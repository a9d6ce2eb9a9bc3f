-- Row versions for the rows a transition reads (workspaces, reservations,
-- handoffs), which each Store keeps in a cache across transactions: a
-- transaction that answers a read from the cache checks, in its next
-- statement batch, that each such row still has the version it assumed
-- (check_row_versions).
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

-- check_row_versions raises SQLSTATE BT001 unless each row (kinds[i]
-- 'workspace', 'reservation' or 'handoff', ids[i] its key) exists with
-- versions[i]. Each is a primary-key lookup, read at the transaction's
-- snapshot like any other read (under SERIALIZABLE, tracked like one).
-- The error aborts the transaction: the server skips the rest of the
-- statement batch, its COMMIT included.
CREATE FUNCTION check_row_versions(kinds text[], ids text[], versions bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	v bigint;
BEGIN
	FOR i IN 1 .. coalesce(cardinality(ids), 0) LOOP
		v := NULL;
		CASE kinds[i]
		WHEN 'workspace' THEN
			SELECT w.version INTO v FROM workspaces w WHERE w.id = ids[i];
		WHEN 'reservation' THEN
			SELECT r.version INTO v FROM reservations r WHERE r.workspace = ids[i];
		WHEN 'handoff' THEN
			SELECT h.version INTO v FROM handoffs h WHERE h.id = ids[i];
		ELSE
			RAISE EXCEPTION 'check_row_versions: unknown kind %', kinds[i];
		END CASE;
		IF v IS DISTINCT FROM versions[i] THEN
			RAISE EXCEPTION 'pgstore: the cached % % changed (version %, cached %)', kinds[i], ids[i], v, versions[i]
				USING ERRCODE = 'BT001';
		END IF;
	END LOOP;
END
$$;
