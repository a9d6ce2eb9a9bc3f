package handoff_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// TestReadyTimeoutPrecedence: one readiness bound per launch, carried to
// its engine. A transfer's launches (the report-only turn and the target)
// carry the Coordinator's Timeouts.Ready; ordinary starts carry the
// session service's; without either, engine.DefaultReadyTimeout.
func TestReadyTimeoutPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		coordinator, service time.Duration // 0: not set
		wantStart, wantXfer  time.Duration
	}{
		{"defaults", 0, 0, engine.DefaultReadyTimeout, engine.DefaultReadyTimeout},
		{"the coordinator's", 3 * time.Minute, 0, engine.DefaultReadyTimeout, 3 * time.Minute},
		{"the service's", 0, 9 * time.Minute, 9 * time.Minute, engine.DefaultReadyTimeout},
		{"both", 3 * time.Minute, 9 * time.Minute, 9 * time.Minute, 3 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			var co *handoff.Coordinator
			eng := enginetest.New(enginetest.Options{Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
				return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
			}})
			t.Cleanup(eng.Close)
			reg := engine.Registry{"demo": eng}
			var opts []handoff.Option
			if tc.coordinator > 0 {
				opts = append(opts, handoff.WithTimeouts(handoff.Timeouts{Ready: tc.coordinator}))
			}
			svc, err := session.New(st, reg, session.Options{ReadyTimeout: tc.service})
			if err != nil {
				t.Fatal(err)
			}
			co, err = handoff.New(svc, reg, opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = co.Shutdown(ctx) })
			cfgA, cfgB := baton.EngineConfig{Engine: "demo", Model: "a"}, baton.EngineConfig{Engine: "demo", Model: "b"}
			if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Mission: "m", Config: cfgA}); err != nil {
				t.Fatal(err)
			}
			src, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			eng.Push(enginetest.Script{Report: "done", ReportToken: enginetest.RightToken})
			h, err := co.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "r", SourceSession: src.ID, GenerateSummary: true, Target: cfgB})
			if err != nil {
				t.Fatal(err)
			}
			if h, err = co.Wait(ctx, "ws", h.ID); err != nil || h.State != store.StateCompleted {
				t.Fatalf("transfer = %+v, %v", h, err)
			}
			ls := eng.Launches()
			if len(ls) != 3 {
				t.Fatalf("%d launches; want the source, the report-only turn, the target", len(ls))
			}
			if got := ls[0].Req.ReadyTimeout; got != tc.wantStart {
				t.Errorf("an ordinary start carries %s; want %s", got, tc.wantStart)
			}
			for _, l := range ls[1:] {
				if got := l.Req.ReadyTimeout; got != tc.wantXfer {
					t.Errorf("the transfer's %s launch carries %s; want %s", l.Req.Turn, got, tc.wantXfer)
				}
			}
		})
	}
}
