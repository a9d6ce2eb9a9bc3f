package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// Update runs a function in a read-write transaction: it commits when the
// function returns nil, and leaves nothing behind when it returns an error.
func Example() {
	ctx := context.Background()
	var st store.Store = memstore.New()
	defer st.Close()

	ws := store.Workspace{ID: "ws-1", Name: "demo", Config: baton.EngineConfig{Engine: "demo"}}
	_ = st.Update(ctx, func(tx store.Tx) error { return tx.PutWorkspace(ws) })

	errBoom := errors.New("boom")
	err := st.Update(ctx, func(tx store.Tx) error {
		w, _ := tx.GetWorkspace("ws-1")
		w.Mission = "changed"
		if err := tx.PutWorkspace(w); err != nil {
			return err
		}
		return errBoom // roll back: the mission change is not kept
	})
	fmt.Println(errors.Is(err, errBoom))

	_ = st.View(ctx, func(tx store.Tx) error {
		w, _ := tx.GetWorkspace("ws-1")
		fmt.Printf("mission %q\n", w.Mission)
		_, err := tx.GetWorkspace("nope")
		fmt.Println(errors.Is(err, store.ErrNotFound), errors.Is(err, baton.ErrNotFound))
		return nil
	})
	// Output:
	// true
	// mission ""
	// true true
}
