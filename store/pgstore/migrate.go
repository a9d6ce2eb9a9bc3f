package pgstore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/batonhq/baton/store"
)

// schemaSQL is the schema, version 1 under the name schemaName, the only
// version so far. A released schema never changes; a change is a new
// version, applied after it.
//
//go:embed migrations/0001_schema.sql
var schemaSQL string

const schemaName = "0001_schema.sql"

// migrate creates schema and its tables if it has none, in one
// transaction that first takes an advisory lock keyed by the schema name:
// processes opening the schema at once wait for each other, and the later
// ones find it up to date. DDL is transactional in PostgreSQL, so a failed
// migration leaves the schema as it was. The versions applied are rows of
// schema_migrations; a schema that records a version this package lacks,
// or under another file name (a development schema from before the
// migrations were squashed into one), is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, log *zap.Logger) error {
	ident := pgx.Identifier{schema}.Sanitize()
	// READ COMMITTED: each statement sees what committed before it, so a
	// process that waited for the lock reads the versions the other
	// applied. Statements without arguments go through the simple
	// protocol, which runs several at once.
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		// A migration may wait, and run, as long as it needs.
		_, err := tx.Exec(ctx, `SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0;
			SET LOCAL idle_in_transaction_session_timeout = 0`)
		if err == nil {
			_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('baton.pgstore.migrate:' || $1, 0))", schema)
		}
		if err == nil {
			_, err = tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+ident+"; SET LOCAL search_path TO "+ident+`;
				CREATE TABLE IF NOT EXISTS schema_migrations (
					version    integer PRIMARY KEY,
					name       text NOT NULL,
					applied_at timestamptz NOT NULL DEFAULT now())`)
		}
		var v int
		var name string
		if err == nil { // a version this package lacks, if any, comes first
			err = tx.QueryRow(ctx, "SELECT version, name FROM schema_migrations ORDER BY (version, name) = (1, $1) LIMIT 1",
				schemaName).Scan(&v, &name)
		}
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return dbErr("migrate", err)
		case v != 1 || name != schemaName:
			return fmt.Errorf("%w: schema %q has migration %d %q, which this version of pgstore does not know", store.ErrFormat, schema, v, name)
		default:
			return nil
		}
		if _, err := tx.Exec(ctx, schemaSQL); err != nil {
			return fmt.Errorf("%w: migration %s: %w", store.ErrFormat, schemaName, dbErr("migrate", err))
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (1, $1)", schemaName); err != nil {
			return dbErr("migrate", err)
		}
		log.Info("pgstore: schema migrated", zap.String("schema", schema), zap.String("migration", schemaName))
		return nil
	})
}
