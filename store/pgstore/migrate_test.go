package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
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
	want := []int{1}
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
	if !errors.Is(err, store.ErrFormat) || !errors.Is(err, baton.ErrUnsupported) {
		t.Fatalf("Open of a newer schema: err = %v, want store.ErrFormat", err)
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

// A schema written by a development version from before the migrations
// were squashed into one (its version 1 under another file name) is
// refused, not migrated.
func TestSquashedSchemaRefused(t *testing.T) {
	schema := freshSchema(t)
	_ = open(t, schema, pgstore.Options{}).Close()
	conn, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "UPDATE "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+
		" SET name = '0001_init.sql' WHERE version = 1"); err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.Open(t.Context(), serverURL(t), pgstore.Options{Schema: schema})
	if err == nil {
		_ = s.Close()
	}
	if !errors.Is(err, store.ErrFormat) {
		t.Fatalf("Open of a pre-squash schema: err = %v, want store.ErrFormat", err)
	}
}
