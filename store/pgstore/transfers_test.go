package pgstore_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton/handoff/handofftest"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// defaultTransferChecks is how many sequences TestTransfers runs unless
// -rapid.checks says otherwise: each sequence's checks read the whole
// store many times, about half a second of round trips per sequence, so
// rapid's default of 100 would make the default test run slow. .ci/run
// runs 100.
const defaultTransferChecks = "10"

// TestTransfers runs the handoff property harness with one Coordinator on
// pgstore. Each sequence opens its own Store on the test's schema, emptied
// first with TRUNCATE (much cheaper than a schema per sequence, and as
// empty). A longer run:
//
//	go test ./store/pgstore -run TestTransfers -rapid.checks=100
func TestTransfers(t *testing.T) {
	url := serverURL(t)
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
		old := flag.Lookup("rapid.checks").Value.String()
		if err := flag.Set("rapid.checks", defaultTransferChecks); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
	}
	schema := freshSchema(t)
	_ = open(t, schema, pgstore.Options{}).Close() // create the tables
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	truncate := "TRUNCATE " + pgx.Identifier{schema}.Sanitize() + ".workspaces"
	for _, table := range []string{"sessions", "handoffs", "reservations", "wakeups", "continuations", "launches",
		"instructions", "changes"} {
		truncate += ", " + pgx.Identifier{schema, table}.Sanitize()
	}
	truncate += " RESTART IDENTITY"
	handofftest.Run(t, handofftest.Config{NewStore: func() (store.Store, func(), error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, truncate); err != nil {
			return nil, nil, err
		}
		s, err := pgstore.Open(ctx, url, pgstore.Options{Schema: schema})
		if err != nil {
			return nil, nil, err
		}
		return s, func() { _ = s.Close() }, nil
	}})
}
