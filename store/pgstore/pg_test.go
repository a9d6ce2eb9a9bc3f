package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton/store/pgstore"
)

// serverURL returns the test server from BATON_PG_URL. Without it a test
// skips, except under CI=true, where a missing server fails the run.
func serverURL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv("BATON_PG_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("BATON_PG_URL is not set, and CI=true requires a PostgreSQL server (.ci/postgres.sh starts one)")
		}
		tb.Skip("BATON_PG_URL is not set: skipping the PostgreSQL tests (run them with: .ci/postgres.sh go test ./store/pgstore)")
	}
	return url
}

// freshSchema returns the name of a schema no one uses yet, and drops it
// when the test ends.
func freshSchema(tb testing.TB) string {
	tb.Helper()
	url := serverURL(tb)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// open opens a store on schema (a fresh one if empty), closed when the
// test ends.
func open(tb testing.TB, schema string, opts pgstore.Options) *pgstore.Store {
	tb.Helper()
	return openAt(tb, serverURL(tb), schema, opts)
}

// openAt is open on the server at url.
func openAt(tb testing.TB, url, schema string, opts pgstore.Options) *pgstore.Store {
	tb.Helper()
	if schema == "" {
		schema = freshSchema(tb)
	}
	opts.Schema = schema
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, url, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
