package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// migrationFiles are the schema's versions, NNNN_name.sql, applied in
// version order. A released file never changes; a change is a new file,
// numbered above the others (numbers may skip).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("%w: read migrations: %w", ErrSchema, err)
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("%w: migration file %q is not named NNNN_name.sql", ErrSchema, e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("%w: read migration %q: %w", ErrSchema, e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("%w: migrations %q and %q have one version", ErrSchema, ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// migrate creates schema and applies the migrations it lacks, in one
// transaction that first takes an advisory lock keyed by the schema name:
// processes opening the schema at once wait for each other, and the later
// ones find it up to date. DDL is transactional in PostgreSQL, so a failed
// migration leaves the schema as it was. A schema that records a version
// this package lacks, or under another file name (a development schema
// from before the migrations were squashed into one), is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, log *zap.Logger) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
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
		known := map[int]string{}
		for _, m := range ms {
			known[m.version] = m.name
		}
		for v, name := range applied {
			if known[v] != name {
				return fmt.Errorf("%w: schema %q has migration %d %q, which this version of pgstore does not know", ErrSchema, schema, v, name)
			}
		}
		for _, m := range ms {
			if _, ok := applied[m.version]; ok {
				continue
			}
			// No arguments: the file, several statements, goes through the
			// simple protocol.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("%w: migration %s: %w", ErrSchema, m.name, dbErr("migrate", err))
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return dbErr("migrate", err)
			}
			log.Info("pgstore: schema migrated", zap.String("schema", schema), zap.String("migration", m.name))
		}
		return nil
	})
}
