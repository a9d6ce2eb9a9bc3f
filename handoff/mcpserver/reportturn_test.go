package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// A source conversation with a report-only turn in it (a transfer that
// failed after its report, the source then went on): the walk leaves the
// turn out unless asked, and no message runs across its borders, in either
// direction and at any page size.
func TestReadHistoryLeavesReportTurnsOut(t *testing.T) {
	before, msgs1 := conversation(21, 3)
	after, msgs2 := conversation(20, 4)
	report := mcpserver.MemHistory{
		{Kind: transcript.Lifecycle, Text: "launch started (report-only turn)", Turn: transcript.ReportOnly},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Write your handoff report. Do not continue the work.", Turn: transcript.ReportOnly},
		{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "submit_session_handoff", Turn: transcript.ReportOnly},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Report submitted; ending my turn.", Turn: transcript.ReportOnly},
	}
	var evs mcpserver.MemHistory
	evs = append(append(append(evs, before...), report...), after...)
	evs = append(evs, report...) // and a second transfer's, at the very end
	without := append(append([]want{}, msgs1...), msgs2...)
	reportMsgs := []want{{speaker: "user", text: "Write your handoff report. Do not continue the work."}, {speaker: "agent", text: "Report submitted; ending my turn."}}
	with := append(append(append(append([]want{}, msgs1...), reportMsgs...), msgs2...), reportMsgs...)
	ctx := context.Background()
	for _, tc := range []struct {
		reportTurns bool
		want        []want
	}{{false, without}, {true, with}} {
		for _, budget := range []int{mcpserver.MinPageChars, 1500, mcpserver.MaxPageChars} {
			for _, dir := range []mcpserver.Direction{mcpserver.OldestFirst, mcpserver.NewestFirst} {
				t.Run(fmt.Sprintf("reportTurns=%v/%s/%d", tc.reportTurns, dir, budget), func(t *testing.T) {
					pages := walk(t, func(a mcpserver.HistoryArgs) mcpserver.Page {
						a.ReportTurns = tc.reportTurns
						p, err := mcpserver.ReadHistory(ctx, evs, historyLimits(), a)
						if err != nil {
							t.Fatal(err)
						}
						return p
					}, dir, budget)
					assemble(t, pages, dir, tc.want)
					marked := 0
					for _, p := range pages {
						if !tc.reportTurns && strings.Contains(p.Text, "Do not continue the work") {
							t.Fatalf("a page shows the report prompt:\n%s", p.Text)
						}
						for _, e := range p.Entries {
							if e.ReportTurn {
								marked++
								if !strings.Contains(p.Text, "report-only turn") {
									t.Fatalf("a report-only entry is not labelled:\n%s", p.Text)
								}
							}
						}
					}
					if tc.reportTurns && marked < 4 || !tc.reportTurns && marked != 0 {
						t.Fatalf("%d entries marked as report-only turns", marked)
					}
				})
			}
		}
	}
}

// A transfer whose user chose not to share the conversation: the target's
// history tool refuses, as its briefing leaves the conversation out.
func TestHistoryRefusesAWithheldConversation(t *testing.T) {
	evs, _ := conversation(4, 5)
	f := newFixture(t, fixtureOpts{history: func(context.Context, baton.WorkspaceID, baton.HandoffID) (mcpserver.History, error) {
		return evs, nil
	}})
	for i, share := range []baton.Share{baton.ShareReport, baton.ShareConversation} {
		h, err := f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: fmt.Sprintf("share-%d", i), SourceSession: f.src.ID,
			Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}, Share: share})
		if err != nil {
			t.Fatal(err)
		}
		if h, err = f.co.Wait(f.ctx, f.ws, h.ID); err != nil || h.State != store.StateCompleted {
			t.Fatalf("Wait = %+v, %v", h, err)
		}
		cs := f.connect(t, "memory", f.srv.GrantTarget(f.ws, h.ID))
		res := call(t, cs, mcpserver.ToolHistory, nil)
		if share == baton.ShareReport {
			if r := refusal(t, res, baton.ErrUnsupported.Code); !strings.Contains(r.Error, "chose not to share") {
				t.Fatalf("refusal %+v does not say why", r)
			}
		} else if res.IsError {
			t.Fatalf("history refused with the conversation shared: %s", resultText(res))
		}
		f.src.ID = h.TargetSession // the next transfer's source
	}
}
