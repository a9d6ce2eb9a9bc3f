package memstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

func Example() {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()

	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{ID: "ws-1", Name: "demo"}); err != nil {
			return err
		}
		return tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-1", RequestID: "req-1", State: store.StateStopping})
	})
	fmt.Println("first handoff:", err)

	// A second pending handoff in the workspace is refused; the Update
	// fails as a whole, so the workspace it inserted first is gone too.
	err = s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{ID: "ws-2"}); err != nil {
			return err
		}
		return tx.PutHandoff(store.Handoff{ID: "h-2", Workspace: "ws-1", RequestID: "req-2", State: store.StateStopping})
	})
	fmt.Println("second handoff refused:", errors.Is(err, store.ErrDuplicate))

	_ = s.View(ctx, func(tx store.Tx) error {
		p, _ := tx.PendingHandoffs("ws-1")
		_, err := tx.GetWorkspace("ws-2")
		fmt.Println("pending:", p[0].ID)
		fmt.Println("ws-2 rolled back:", errors.Is(err, store.ErrNotFound))
		return nil
	})
	// Output:
	// first handoff: <nil>
	// second handoff refused: true
	// pending: h-1
	// ws-2 rolled back: true
}
