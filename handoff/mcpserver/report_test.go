package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

func TestReportSubmittedAndTransferCompletes(t *testing.T) {
	for _, kind := range transports {
		for _, backend := range []string{"memstore", "badgerstore"} {
			t.Run(kind+"/"+backend, func(t *testing.T) {
				var st store.Store
				if backend == "badgerstore" {
					b, err := badgerstore.Open(t.TempDir(), badgerstore.Options{Small: true, NoSync: true})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = b.Close() })
					st = b
				}
				f := newFixture(t, fixtureOpts{st: st})
				h, proc, acc := f.reportTurn(t, f.ws, f.src.ID)
				cs := f.connect(t, kind, acc)
				if diff := cmp.Diff([]string{mcpserver.ToolFacts, mcpserver.ToolSubmit}, toolNames(t, cs)); diff != "" {
					t.Fatalf("tools of a report turn (-want +got):\n%s", diff)
				}
				report := "# Report\n\nThe login test polls now; `go test -count=200 ./login` passed.\n"
				res := call(t, cs, mcpserver.ToolSubmit, map[string]any{"report": report})
				if res.IsError {
					t.Fatalf("submit refused: %s", resultText(res))
				}
				var got mcpserver.Submitted
				structured(t, res, &got)
				if want := (mcpserver.Submitted{Stored: true, Chars: len(strings.TrimSpace(report))}); got != want {
					t.Fatalf("submitted %+v, want %+v", got, want)
				}
				// The report is stored when the call returns.
				stored, err := f.co.Get(f.ctx, f.ws, h.ID)
				if err != nil || stored.Report != strings.TrimSpace(report) || stored.State != store.StateGenerating {
					t.Fatalf("after submit: %v, state %s, report %q", err, stored.State, stored.Report)
				}
				proc.Finish(0, nil) // the CLI ends its turn
				done := f.waitState(t, f.ws, h.ID, store.StateCompleted)
				if done.Report != strings.TrimSpace(report) || done.TargetSession == "" {
					t.Fatalf("completed handoff %+v", done)
				}
			})
		}
	}
}

func TestReportRefusals(t *testing.T) {
	ok := "A fine report."
	tests := []struct {
		name string
		// run submits whatever the case is about and returns the result;
		// the fixture has a report turn running for handoff h.
		run  func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (args any, a mcpserver.Access)
		code string
	}{
		{"wrong token", func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (any, mcpserver.Access) {
			acc.Token = baton.NewToken()
			return map[string]any{"report": ok}, acc
		}, baton.ErrConflict.Code},
		{"another workspace", func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (any, mcpserver.Access) {
			acc.Workspace = "ws-other"
			return map[string]any{"report": ok}, acc
		}, baton.ErrNotFound.Code},
		{"24,001 characters", func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (any, mcpserver.Access) {
			return map[string]any{"report": strings.Repeat("é", baton.MaxReportChars+1)}, acc
		}, baton.ErrInvalid.Code},
		{"empty", func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (any, mcpserver.Access) {
			return map[string]any{"report": " \n\t "}, acc
		}, baton.ErrInvalid.Code},
		{"no report argument", func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (any, mcpserver.Access) {
			return map[string]any{"text": ok}, acc
		}, baton.ErrInvalid.Code},
		{"second submission", func(t *testing.T, f *fixture, kind string, acc mcpserver.Access) (any, mcpserver.Access) {
			cs := f.connect(t, kind, acc)
			if res := call(t, cs, mcpserver.ToolSubmit, map[string]any{"report": ok}); res.IsError {
				t.Fatalf("first submission refused: %s", resultText(res))
			}
			// The same text again is a harmless retry.
			if res := call(t, cs, mcpserver.ToolSubmit, map[string]any{"report": "  " + ok + "\n"}); res.IsError {
				t.Fatalf("same text refused: %s", resultText(res))
			}
			return map[string]any{"report": ok + " Edited."}, acc
		}, baton.ErrConflict.Code},
	}
	for _, kind := range []string{"memory", "http"} {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				f := newFixture(t, fixtureOpts{})
				h, proc, acc := f.reportTurn(t, f.ws, f.src.ID)
				args, a := tt.run(t, f, kind, acc)
				cs := f.connect(t, kind, a)
				refusal(t, call(t, cs, mcpserver.ToolSubmit, args), tt.code)
				// A refusal changes nothing: the right report still goes in,
				// or the first one stays.
				proc.Finish(0, nil)
				got, err := f.co.Get(f.ctx, f.ws, h.ID)
				if err != nil {
					t.Fatal(err)
				}
				if tt.name == "second submission" {
					got = f.waitState(t, f.ws, h.ID, store.StateCompleted)
					if got.Report != ok {
						t.Fatalf("report %q, want the first one", got.Report)
					}
				} else if got.Report != "" {
					t.Fatalf("a refused report was stored: %q", got.Report)
				}
			})
		}
	}
}

func TestReportAfterTheTurnEndedAndFromAnEarlierAttempt(t *testing.T) {
	for _, kind := range []string{"memory", "http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{})
			h, proc, first := f.reportTurn(t, f.ws, f.src.ID)
			proc.Finish(0, nil) // the turn ends without a report: the attempt fails
			f.waitState(t, f.ws, h.ID, store.StateFailed)
			cs := f.connect(t, kind, first)
			r := refusal(t, call(t, cs, mcpserver.ToolSubmit, map[string]any{"report": "late"}), baton.ErrConflict.Code)
			if !strings.Contains(r.Action, "do not retry") {
				t.Errorf("action %q", r.Action)
			}

			// Retry: attempt 2 runs its own report turn; attempt 1's token is refused.
			n := len(f.eng.Launches())
			f.eng.Push(enginetest.Script{Hang: true})
			if _, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Retry); err != nil {
				t.Fatal(err)
			}
			l := f.launch(t, n+1)
			f.waitState(t, f.ws, h.ID, store.StateGenerating)
			second := mcpserver.ReportAccess(*l.Req.Report)
			if second.Token == first.Token {
				t.Fatal("attempt 2 reuses attempt 1's token")
			}
			cs1 := f.connect(t, kind, first)
			refusal(t, call(t, cs1, mcpserver.ToolSubmit, map[string]any{"report": "from attempt 1"}), baton.ErrConflict.Code)
			refusal(t, call(t, cs1, mcpserver.ToolFacts, nil), baton.ErrConflict.Code)
			cs2 := f.connect(t, kind, second)
			if res := call(t, cs2, mcpserver.ToolSubmit, map[string]any{"report": "from attempt 2"}); res.IsError {
				t.Fatalf("attempt 2's report refused: %s", resultText(res))
			}
			l.Proc.Finish(0, nil)
			done := f.waitState(t, f.ws, h.ID, store.StateCompleted)
			if done.Report != "from attempt 2" {
				t.Fatalf("report %q", done.Report)
			}
			// After the transfer, the turn's token is refused.
			refusal(t, call(t, cs2, mcpserver.ToolSubmit, map[string]any{"report": "from attempt 2"}), baton.ErrConflict.Code)
		})
	}
}

func TestReportOfExactlyTheLimitIsAccepted(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	h, proc, acc := f.reportTurn(t, f.ws, f.src.ID)
	report := strings.Repeat("é", baton.MaxReportChars) // 24,000 characters, 48,000 bytes
	res := call(t, f.connect(t, "http", acc), mcpserver.ToolSubmit, map[string]any{"report": "\n" + report + "\n"})
	if res.IsError {
		t.Fatalf("refused: %s", resultText(res))
	}
	proc.Finish(0, nil)
	if got := f.waitState(t, f.ws, h.ID, store.StateCompleted); got.Report != report {
		t.Fatalf("stored %d bytes, want %d", len(got.Report), len(report))
	}
}
