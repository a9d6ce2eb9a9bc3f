package backend

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

func TestChangesKeepFirstOrderAndLastValue(t *testing.T) {
	var c Changes[string, int]
	c.Add("a", 1)
	c.Add("b", 2)
	c.Add("a", 3)
	if got := slices.Collect(c.All()); !slices.Equal(got, []int{3, 2}) || c.Len() != 2 {
		t.Fatalf("All() = %v (Len %d), want [3 2] (2)", got, c.Len())
	}
}

func TestRetries(t *testing.T) {
	for n, want := range map[int]int{0: DefaultRetries, -1: 0, 3: 3} {
		if got := Retries(n); got != want {
			t.Errorf("Retries(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestPauseEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Pause(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Pause = %v, want context.Canceled", err)
	}
}

func TestErrorsMatch(t *testing.T) {
	h := store.Handoff{ID: "h", Workspace: "w", RequestID: "r"}
	for err, want := range map[error]error{
		Required("x", "handoff", "ID", ""):          baton.ErrInvalid,
		NotFound("x", "handoff", "h"):               store.ErrNotFound,
		Writable(nil, false, "x", "PutHandoff"):     baton.ErrInternal,
		KeysChanged("x", h, h):                      baton.ErrInvalid,
		RequestTaken("x", h, "other"):               store.ErrDuplicate,
		SlotTaken("x", h, baton.HandoffID("other")): store.ErrDuplicate,
	} {
		if !errors.Is(err, want) {
			t.Errorf("%v does not match %v", err, want)
		}
	}
	if Required("x", "handoff", "ID", "h") != nil {
		t.Error("Required refused a set key")
	}
}
