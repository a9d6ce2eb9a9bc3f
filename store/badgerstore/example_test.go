package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

func Example() {
	dir, err := os.MkdirTemp("", "baton-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// The zero Options: sized profile, fsync on every commit.
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{ID: "ws-1", Name: "demo"}); err != nil {
			return err
		}
		return tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-1", RequestID: "req-1", State: store.StateStopping})
	})
	fmt.Println("first handoff:", err)

	// The directory is locked while the store is open.
	_, err = badgerstore.Open(dir, badgerstore.Options{})
	fmt.Println("second Open locked out:", errors.Is(err, badgerstore.ErrLocked))
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}

	// After a restart the pending handoff still holds its workspace's slot.
	s, err = badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	err = s.Update(ctx, func(tx store.Tx) error {
		return tx.PutHandoff(store.Handoff{ID: "h-2", Workspace: "ws-1", RequestID: "req-2", State: store.StateStopping})
	})
	fmt.Println("second pending handoff refused:", errors.Is(err, store.ErrDuplicate))
	_ = s.View(ctx, func(tx store.Tx) error {
		p, err := tx.PendingHandoffs("ws-1")
		fmt.Println("pending after reopen:", p[0].ID, err)
		return nil
	})
	// Output:
	// first handoff: <nil>
	// second Open locked out: true
	// second pending handoff refused: true
	// pending after reopen: h-1 <nil>
}

// A reader of a workspace's change feed waits on Subscribe and reads the
// changes after the last Seq it saw; the notification comes once the
// commit is durable.
func ExampleStore_Subscribe() {
	dir, err := os.MkdirTemp("", "baton-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := badgerstore.Open(dir, badgerstore.Options{Small: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ch, cancel := s.Subscribe("ws-1")
	defer cancel()
	err = s.Update(ctx, func(tx store.Tx) error {
		return tx.PutInstruction(store.Instruction{ID: "i-1", Workspace: "ws-1", Text: "add tests", State: store.InstructionPending})
	})
	if err != nil {
		log.Fatal(err)
	}
	<-ch
	_ = s.View(ctx, func(tx store.Tx) error {
		changes, err := tx.Changes("ws-1", 0, 0)
		for _, c := range changes {
			fmt.Println(c.Seq, c.Instruction.Text)
		}
		return err
	})
	// Output:
	// 1 add tests
}

// A readiness check asks the store whether it can persist: here its
// directory is removed under it, and every later Update is refused.
func ExampleStore_Health() {
	parent, err := os.MkdirTemp("", "baton-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(parent)
	dir := parent + "/store"
	s, err := badgerstore.Open(dir, badgerstore.Options{Small: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("healthy:", s.Health() == nil)
	_ = os.RemoveAll(dir)
	fmt.Println("cannot persist:", errors.Is(s.Health(), badgerstore.ErrCannotPersist))
	err = s.Update(context.Background(), func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{ID: "ws-1", Name: "lost"})
	})
	fmt.Println("update refused:", errors.Is(err, badgerstore.ErrCannotPersist))
	fmt.Println("close:", s.Close() != nil) // badger cannot flush: Close says so, without waiting
	// Output:
	// healthy: true
	// cannot persist: true
	// update refused: true
	// close: true
}
