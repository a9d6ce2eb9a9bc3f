package pgstore

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// schemaSQL is the schema, version 1 under the name schemaName: the only
// migration so far. A released schema never changes; a change is a new
// version, applied after it.
//
//go:embed migrations/0001_schema.sql
var schemaSQL string

const schemaName = "0001_schema.sql"

// migrate creates schema and applies the migration it lacks, in one
// transaction that first takes an advisory lock keyed by the schema name:
// processes opening the schema at once wait for each other, and the later
// ones find it up to date. DDL is transactional in PostgreSQL, so a failed
// migration leaves the schema as it was. A schema that records a version
// this package lacks, or under another file name (a development schema
// from before the migrations were squashed into one), is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, log *zap.Logger) error {
	ident := pgx.Identifier{schema}.Sanitize()
	// READ COMMITTED: each statement sees what committed before it, so a
	// process that waited for the lock reads the versions the other
	// applied.
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		steps := []struct {
			sql  string
			args []any
		}{
			// A migration may wait, and run, as long as it needs.
			{"SET LOCAL lock_timeout = 0", nil},
			{"SET LOCAL statement_timeout = 0", nil},
			{"SET LOCAL idle_in_transaction_session_timeout = 0", nil},
			{"SELECT pg_advisory_xact_lock(hashtextextended('baton.pgstore.migrate:' || $1, 0))", []any{schema}},
			{"CREATE SCHEMA IF NOT EXISTS " + ident, nil},
			{"SET LOCAL search_path TO " + ident, nil},
			{`CREATE TABLE IF NOT EXISTS schema_migrations (
				version    integer PRIMARY KEY,
				name       text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now())`, nil},
		}
		for _, st := range steps {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return dbErr("migrate", err)
			}
		}
		rows, err := tx.Query(ctx, "SELECT version, name FROM schema_migrations")
		if err != nil {
			return dbErr("migrate", err)
		}
		applied := map[int]string{}
		var v int
		var name string
		_, err = pgx.ForEachRow(rows, []any{&v, &name}, func() error { applied[v] = name; return nil })
		if err != nil {
			return dbErr("migrate", err)
		}
		for v, name := range applied {
			if v != 1 || name != schemaName {
				return fmt.Errorf("%w: schema %q has migration %d %q, which this version of pgstore does not know", ErrSchema, schema, v, name)
			}
		}
		if len(applied) != 0 {
			return nil
		}
		// No arguments: the file, several statements, goes through the
		// simple protocol.
		if _, err := tx.Exec(ctx, schemaSQL); err != nil {
			return fmt.Errorf("%w: migration %s: %w", ErrSchema, schemaName, dbErr("migrate", err))
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (1, $1)", schemaName); err != nil {
			return dbErr("migrate", err)
		}
		log.Info("pgstore: schema migrated", zap.String("schema", schema), zap.String("migration", schemaName))
		return nil
	})
}
