package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// Open a store on a server, write a workspace and read it back. (It needs
// a server, so it is compiled but not run by go test.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, os.Getenv("BATON_PG_URL"), pgstore.Options{Schema: "baton_example"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = s.Update(ctx, func(tx store.Tx) error {
		err := tx.PutWorkspace(store.Workspace{ID: "ws-1", Name: "demo", CreatedAt: time.Now()})
		if errors.Is(err, store.ErrDuplicate) {
			return nil // created by an earlier run
		}
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	err = s.View(ctx, func(tx store.Tx) error {
		w, err := tx.GetWorkspace("ws-1")
		fmt.Println(w.Name)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Options are checked before anything is dialled: a schema name must be a
// plain lower-case identifier.
func ExampleOpen_invalidSchema() {
	_, err := pgstore.Open(context.Background(), "postgres://127.0.0.1/baton", pgstore.Options{Schema: "Team-A"})
	fmt.Println(errors.Is(err, baton.ErrInvalid))
	fmt.Println(err)
	// Output:
	// true
	// baton: invalid: pgstore: schema "Team-A": only a-z, 0-9 and _ (not first) are allowed
}

// Subscribe to a workspace's change feed and read what changed after each
// notification. (It needs a server, so it is compiled but not run.)
func ExampleStore_Subscribe() {
	ctx := context.Background()
	s, err := pgstore.Open(ctx, os.Getenv("BATON_PG_URL"), pgstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ch, stop := s.Subscribe("ws-1")
	defer stop()
	var seen int64
	for range ch {
		err := s.View(ctx, func(tx store.Tx) error {
			changes, err := tx.Changes("ws-1", seen, 100)
			for _, c := range changes {
				fmt.Println(c.Seq, c.Handoff != nil, c.Session != nil, c.Instruction != nil)
				seen = c.Seq
			}
			return err
		})
		if err != nil {
			log.Fatal(err)
		}
	}
}
