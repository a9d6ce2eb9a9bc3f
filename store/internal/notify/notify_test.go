package notify

import (
	"testing"

	"github.com/batonhq/baton"
)

// pending reports whether ch holds a notification, taking it.
func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestHub(t *testing.T) {
	var h Hub
	a, cancelA := h.Subscribe("ws-a")
	b, cancelB := h.Subscribe("ws-b")
	all, cancelAll := h.Subscribe("")
	defer cancelB()
	defer cancelAll()

	tests := []struct {
		name         string
		notify       func()
		wantA, wantB bool
		wantAll      bool
	}{
		{"nothing grown", func() { h.Notify(nil) }, false, false, false},
		{"ws-a", func() { h.Notify([]baton.WorkspaceID{"ws-a"}) }, true, false, true},
		{"ws-a twice, coalesced", func() { h.Notify([]baton.WorkspaceID{"ws-a"}); h.Notify([]baton.WorkspaceID{"ws-a"}) }, true, false, true},
		{"both", func() { h.Notify([]baton.WorkspaceID{"ws-b", "ws-a"}) }, true, true, true},
		{"wake all", h.WakeAll, true, true, true},
	}
	for _, tc := range tests {
		tc.notify()
		for _, c := range []struct {
			name string
			ch   <-chan struct{}
			want bool
		}{{"ws-a", a, tc.wantA}, {"ws-b", b, tc.wantB}, {"all", all, tc.wantAll}} {
			if got := pending(c.ch); got != c.want {
				t.Errorf("%s: subscriber %s notified = %v, want %v", tc.name, c.name, got, c.want)
			}
			if pending(c.ch) {
				t.Errorf("%s: subscriber %s holds a second notification", tc.name, c.name)
			}
		}
	}
	cancelA()
	cancelA() // idempotent
	h.Notify([]baton.WorkspaceID{"ws-a"})
	if pending(a) {
		t.Error("a cancelled subscription was notified")
	}
}
