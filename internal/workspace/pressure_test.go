package workspace

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// TestMarkPressureRules: each rule of the context-pressure policy, alone,
// keeps a settled turn over the threshold from making a transfer due.
func TestMarkPressureRules(t *testing.T) {
	over := store.Usage{Tokens: 90, Window: 100, Launch: "l-1"}
	cases := []struct {
		name   string
		change func(tx store.Tx, w *store.Workspace, s *store.Session) error
		launch baton.LaunchID
		due    bool
		blind  bool
	}{
		{name: "due", launch: "l-1", due: true},
		{name: "at the threshold exactly", launch: "l-1", due: true,
			change: func(_ store.Tx, _ *store.Workspace, s *store.Session) error { s.Usage.Tokens = 80; return nil }},
		{name: "under the threshold", launch: "l-1",
			change: func(_ store.Tx, _ *store.Workspace, s *store.Session) error { s.Usage.Tokens = 79; return nil }},
		{name: "policy off", launch: "l-1",
			change: func(_ store.Tx, w *store.Workspace, _ *store.Session) error { w.Pressure.Threshold = 0; return nil }},
		{name: "window unknown", launch: "l-1", blind: true,
			change: func(_ store.Tx, _ *store.Workspace, s *store.Session) error { s.Usage.Window = 0; return nil }},
		{name: "the usage of an earlier turn", launch: "l-2", blind: true},
		{name: "fired already", launch: "l-1",
			change: func(_ store.Tx, _ *store.Workspace, s *store.Session) error {
				s.Pressure = store.PressureFired
				return nil
			}},
		{name: "not the current session", launch: "l-1",
			change: func(_ store.Tx, w *store.Workspace, _ *store.Session) error { w.CurrentSession = "s-other"; return nil }},
		{name: "archived", launch: "l-1",
			change: func(_ store.Tx, w *store.Workspace, _ *store.Session) error { w.Archived = true; return nil }},
		{name: "reserved", launch: "l-1",
			change: func(tx store.Tx, w *store.Workspace, _ *store.Session) error {
				_, _, err := Take(tx, w.ID, "h-1", Lease{Holder: "x", Expires: time.Now().Add(time.Hour)}, time.Now())
				return err
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := memstore.New()
			err := st.Update(context.Background(), func(tx store.Tx) error {
				w := store.Workspace{ID: "ws", CurrentSession: "s-1", Pressure: store.PressurePolicy{Threshold: 0.8}}
				s := store.Session{ID: "s-1", Workspace: "ws", Status: store.SessionEnded, Usage: over}
				if c.change != nil {
					if err := c.change(tx, &w, &s); err != nil {
						return err
					}
				}
				if err := tx.PutWorkspace(w); err != nil {
					return err
				}
				due, blind, err := MarkPressure(tx, &s, c.launch)
				if due != c.due || blind != c.blind || (s.Pressure == store.PressureDue) != c.due {
					t.Errorf("MarkPressure = due %v, blind %v (mark %q), want due %v, blind %v", due, blind, s.Pressure, c.due, c.blind)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOverThresholdAtEveryPercent: a usage exactly at a threshold of a
// whole percentage reaches it, whatever the window (the product of the
// threshold and the window rounds above the tokens for some: 0.55 of
// 200000), and one token less does not.
func TestOverThresholdAtEveryPercent(t *testing.T) {
	for pct := int64(1); pct <= 100; pct++ {
		p := store.PressurePolicy{Threshold: float64(pct) / 100}
		for _, window := range []int64{1000, 128000, 200000, 272000, 400000, 1000000} {
			at := pct * window / 100
			if !OverThreshold(p, store.Usage{Tokens: at, Window: window}) {
				t.Errorf("%d of %d does not reach %v", at, window, p.Threshold)
			}
			if OverThreshold(p, store.Usage{Tokens: at - 1, Window: window}) {
				t.Errorf("%d of %d reaches %v", at-1, window, p.Threshold)
			}
		}
	}
}
