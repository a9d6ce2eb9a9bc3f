package session_test

import (
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// checkWritable runs CheckWritable in a read transaction.
func (f *fixture) checkWritable(o workspace.Owner) error {
	f.t.Helper()
	return f.st.View(f.ctx, func(tx store.Tx) error { return workspace.CheckWritable(tx, f.ws, o.Token, o.Epoch) })
}

func TestCheckWritable(t *testing.T) {
	f := newFixture(t)
	if err := f.checkWritable(workspace.Owner{}); err != nil {
		t.Fatalf("never reserved: %v", err)
	}
	old := f.reserve("h1")
	f.release("h1")
	if err := f.checkWritable(workspace.Owner{}); err != nil {
		t.Fatalf("released: %v", err)
	}
	cur := f.reserve("h2")
	tests := []struct {
		name  string
		owner workspace.Owner
		want  error // nil: writable
	}{
		{"the owner", cur, nil},
		{"no token", workspace.Owner{}, session.ErrWorkspaceBusy},
		{"no token, right epoch", workspace.Owner{Epoch: cur.Epoch}, session.ErrWorkspaceBusy},
		{"another token, right epoch", workspace.Owner{Token: baton.NewToken(), Epoch: cur.Epoch}, session.ErrWorkspaceBusy},
		{"token of an older take", old, workspace.ErrStaleEpoch},
		{"right token, wrong epoch", workspace.Owner{Token: cur.Token, Epoch: cur.Epoch - 1}, workspace.ErrStaleEpoch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.checkWritable(tt.owner)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckWritable = %v, want nil", err)
				}
				return
			}
			mustIs(t, err, tt.want)
		})
	}
	// Each sentinel carries its code.
	mustIs(t, f.checkWritable(workspace.Owner{}), baton.ErrBusy)
	mustIs(t, f.checkWritable(old), baton.ErrStale)
}

func TestEpochGrowsAcrossTakesAndReleases(t *testing.T) {
	f := newFixture(t)
	var epochs []int64
	for _, h := range []baton.HandoffID{"h1", "h2", "h3"} {
		o := f.reserve(h)
		epochs = append(epochs, o.Epoch)
		f.release(h)
	}
	again := f.reserve("h3") // a re-take by the same handoff grows it too
	epochs = append(epochs, again.Epoch)
	for i := 1; i < len(epochs); i++ {
		if epochs[i] <= epochs[i-1] {
			t.Fatalf("epochs %v do not grow", epochs)
		}
	}
	var r store.Reservation
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { r, err = tx.GetReservation(f.ws); return err }); err != nil {
		t.Fatal(err)
	}
	if !r.Held || r.Epoch != again.Epoch || !r.Owner.Matches(again.Token) || r.Owner.Matches(baton.NewToken()) {
		t.Fatalf("reservation = %+v, want held at epoch %d with the last token's hash", r, again.Epoch)
	}
}

func TestReleaseByAnotherHandoffKeepsIt(t *testing.T) {
	f := newFixture(t)
	o := f.reserve("h1")
	f.release("someone-else")
	if err := f.checkWritable(workspace.Owner{}); !errors.Is(err, session.ErrWorkspaceBusy) {
		t.Fatalf("after a foreign release: %v, want still busy", err)
	}
	if err := f.checkWritable(o); err != nil {
		t.Fatalf("owner after a foreign release: %v", err)
	}
	var reserved bool
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { reserved, err = workspace.Reserved(tx, f.ws); return err }); err != nil || !reserved {
		t.Fatalf("Reserved = %v, %v; want true", reserved, err)
	}
	f.release("h1")
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { reserved, err = workspace.Reserved(tx, f.ws); return err }); err != nil || reserved {
		t.Fatalf("Reserved after release = %v, %v; want false", reserved, err)
	}
}

func TestAssertWritable(t *testing.T) {
	f := newFixture(t)
	f.reserve("h1")
	mustIs(t, f.svc.AssertWritable(f.ctx, f.ws), session.ErrWorkspaceBusy)
	f.release("h1")
	if err := f.svc.AssertWritable(f.ctx, f.ws); err != nil {
		t.Fatalf("released: %v", err)
	}
	mustIs(t, f.svc.AssertWritable(f.ctx, "nope"), session.ErrNoWorkspace)
}
