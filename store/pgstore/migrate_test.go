package pgstore_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

func schemaVersions(t *testing.T, schema string) []int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), "SELECT version FROM "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

// Processes opening a new schema at once migrate it once: the advisory
// lock makes the others wait and find it done.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	schema := freshSchema(t)
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := pgstore.Open(t.Context(), serverURL(t), pgstore.Options{Schema: schema})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	want := []int{1, 2, 3, 4, 5, 6, 7}
	if got := schemaVersions(t, schema); !slices.Equal(got, want) {
		t.Errorf("schema_migrations = %v, want %v", got, want)
	}
	// Opening again changes nothing.
	open(t, schema, pgstore.Options{})
	if got := schemaVersions(t, schema); !slices.Equal(got, want) {
		t.Errorf("schema_migrations after a reopen = %v, want %v", got, want)
	}
}

// A schema written by a newer version is refused, not downgraded.
func TestNewerSchemaRefused(t *testing.T) {
	schema := freshSchema(t)
	_ = open(t, schema, pgstore.Options{}).Close()
	conn, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "INSERT INTO "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+
		" (version, name) VALUES (999, '0999_future.sql')"); err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.Open(t.Context(), serverURL(t), pgstore.Options{Schema: schema})
	if err == nil {
		_ = s.Close()
	}
	if !errors.Is(err, pgstore.ErrSchema) || !errors.Is(err, baton.ErrUnsupported) {
		t.Fatalf("Open of a newer schema: err = %v, want pgstore.ErrSchema", err)
	}
}

func TestOpenRefusesInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		url  string
		opts pgstore.Options
	}{
		{"upper-case schema", "postgres://127.0.0.1:1/x", pgstore.Options{Schema: "Baton"}},
		{"schema starting with a digit", "postgres://127.0.0.1:1/x", pgstore.Options{Schema: "1baton"}},
		{"quote in schema", "postgres://127.0.0.1:1/x", pgstore.Options{Schema: `a"b`}},
		{"long schema", "postgres://127.0.0.1:1/x", pgstore.Options{Schema: "a123456789012345678901234567890123456789012345678"}},
		{"negative pool", "postgres://127.0.0.1:1/x", pgstore.Options{MaxConns: -1}},
		{"bad connection string", "postgres://%zz", pgstore.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := pgstore.Open(t.Context(), tt.url, tt.opts)
			if err == nil {
				_ = s.Close()
			}
			if !errors.Is(err, baton.ErrInvalid) {
				t.Errorf("err = %v, want baton.ErrInvalid", err)
			}
		})
	}
}

// TestVersion1DataKeepsWorking: a schema written at version 1, before
// workspaces kept their session ranking, migrates with its rows; its
// workspaces read as unranked, and package session keeps their current
// session by the same rule, ranking them on its first write there.
func TestVersion1DataKeepsWorking(t *testing.T) {
	schema := freshSchema(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	// No arguments: several statements through the simple protocol.
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+ident+"; SET search_path TO "+ident+";\n"+string(v1)+`;
		CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init.sql');
		INSERT INTO workspaces (id, name, mission, root, config, current_session, activation_counter, archived, created_at, updated_at)
			VALUES ('ws-old', '', '', '', '{}', 's-2', 2, false, '2026-01-01 09:00Z', '2026-01-01 12:00Z');
		INSERT INTO sessions (id, workspace, config, native_id, status, activation_order, started_at, ended_at, end_reason, created_at) VALUES
			('s-legacy-a', 'ws-old', '{}', 'na', 'ended', 0, '2026-01-01 09:00Z', '2026-01-01 09:30Z', '', '2026-01-01 09:00Z'),
			('s-legacy-b', 'ws-old', '{}', 'nb', 'ended', 0, '2026-01-01 09:10Z', '2026-01-01 09:20Z', '', '2026-01-01 09:10Z'),
			('s-1', 'ws-old', '{}', 'n1', 'ended', 1, '2026-01-01 10:00Z', '2026-01-01 11:00Z', '', '2026-01-01 10:00Z'),
			('s-2', 'ws-old', '{}', 'n2', 'running', 2, '2026-01-01 11:00Z', '0001-01-01 00:00Z', '', '2026-01-01 11:00Z');
		INSERT INTO instructions (id, workspace, text, state, session, created_at, updated_at) VALUES
			('i-1', 'ws-old', 'one', 'delivered', 's-1', '2026-01-01 10:00Z', '2026-01-01 10:00Z'),
			('i-2', 'ws-old', 'two', 'unknown', 's-2', '2026-01-01 11:00Z', '2026-01-01 11:00Z'),
			('i-3', 'ws-old', 'three', 'pending', '', '2026-01-01 11:30Z', '2026-01-01 11:30Z'),
			('i-4', 'ws-old', 'four', 'cancelled', '', '2026-01-01 11:40Z', '2026-01-01 11:40Z');
		INSERT INTO feed_heads (workspace, last_seq) VALUES ('ws-old', 2);
		INSERT INTO changes (workspace, seq, kind, record) VALUES
			('ws-old', 1, 'instruction', '{"ID":"i-1","Workspace":"ws-old"}'),
			('ws-old', 2, 'instruction', '{"ID":"i-2","Workspace":"ws-old"}');`)
	if err != nil {
		t.Fatal(err)
	}
	st := open(t, schema, pgstore.Options{})
	if got := schemaVersions(t, schema); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("schema_migrations = %v, want [1 2 3 4 5 6 7]", got)
	}
	// Its instructions: the open ones (pending, unknown) are listed from
	// the index migration 6 built over the rows already there.
	var open []baton.InstructionID
	err = st.View(ctx, func(tx store.Tx) error {
		is, err := tx.OpenInstructions("ws-old")
		for _, i := range is {
			open = append(open, i.ID)
		}
		return err
	})
	if err != nil || !slices.Equal(open, []baton.InstructionID{"i-2", "i-3"}) {
		t.Fatalf("OpenInstructions(ws-old) = %v, %v; want [i-2 i-3]", open, err)
	}
	current := func() store.Workspace {
		t.Helper()
		var w store.Workspace
		if err := st.View(ctx, func(tx store.Tx) (err error) { w, err = tx.GetWorkspace("ws-old"); return err }); err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := current(); w.Ranked || w.CurrentSession != "s-2" || w.Running != nil || w.RankHead != "" {
		t.Fatalf("migrated workspace = %+v, want unranked with current s-2", w)
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		rollback baton.SessionID
		want     baton.SessionID
	}{
		{"s-2", "s-1"},        // ranks the workspace: three rows, linked inline
		{"s-1", "s-legacy-a"}, // the legacy fallback: ended 09:30, the latest
		{"s-legacy-a", "s-legacy-b"},
		{"s-legacy-b", ""},
	} {
		err := st.Update(ctx, func(tx store.Tx) error { return session.Rollback(tx, step.rollback, "rolled back", now) })
		if err != nil {
			t.Fatal(err)
		}
		if w := current(); !w.Ranked || w.CurrentSession != step.want {
			t.Fatalf("after rolling back %s: ranked %v, current %q; want ranked, %q", step.rollback, w.Ranked, w.CurrentSession, step.want)
		}
	}
	// Its change feed, numbered by feed_heads up to migration 7, goes on
	// from the last Seq written then, without a gap.
	var seqs []int64
	err = st.View(ctx, func(tx store.Tx) error {
		cs, err := tx.Changes("ws-old", 0, 0)
		for _, c := range cs {
			seqs = append(seqs, c.Seq)
		}
		return err
	})
	if err != nil || len(seqs) < 3 {
		t.Fatalf("Changes(ws-old) = %v, %v; want the 2 changes written before the migration and the rollbacks'", seqs, err)
	}
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("Changes(ws-old) Seqs = %v, want 1, 2, 3...", seqs)
		}
	}
}
