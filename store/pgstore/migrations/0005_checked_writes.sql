-- Cheaper writes of the versioned rows (migration 0004).
--
-- The store's own updates of those rows now set the version themselves
-- (version = nextval of row_versions), and the update triggers fire only
-- for an update that does not raise the version: every other writer (an
-- operator's UPDATE in psql) still gets a new version from the trigger,
-- but the store's writes skip a PL/pgSQL call per row. Inserts keep
-- their trigger.
DROP TRIGGER workspaces_version ON workspaces;
DROP TRIGGER reservations_version ON reservations;
DROP TRIGGER handoffs_version ON handoffs;

CREATE TRIGGER workspaces_version BEFORE INSERT ON workspaces
	FOR EACH ROW EXECUTE FUNCTION next_row_version();
CREATE TRIGGER reservations_version BEFORE INSERT ON reservations
	FOR EACH ROW EXECUTE FUNCTION next_row_version();
CREATE TRIGGER handoffs_version BEFORE INSERT ON handoffs
	FOR EACH ROW EXECUTE FUNCTION next_row_version();

CREATE TRIGGER workspaces_version_update BEFORE UPDATE ON workspaces
	FOR EACH ROW WHEN (NEW.version <= OLD.version) EXECUTE FUNCTION next_row_version();
CREATE TRIGGER reservations_version_update BEFORE UPDATE ON reservations
	FOR EACH ROW WHEN (NEW.version <= OLD.version) EXECUTE FUNCTION next_row_version();
CREATE TRIGGER handoffs_version_update BEFORE UPDATE ON handoffs
	FOR EACH ROW WHEN (NEW.version <= OLD.version) EXECUTE FUNCTION next_row_version();
