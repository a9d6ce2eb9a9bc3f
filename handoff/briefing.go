package handoff

import (
	"context"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
)

// DefaultBriefing builds the target's prompt with recap.HandoffPrompt from
// what the records hold: the workspace's mission, the source session, the
// report, if one was written, the facts gathered (Briefing.Facts), the queued
// instructions not known to be delivered, by id and state, and the source
// session's conversation, replayed from its engine's transcript (bounded
// and redacted, report-only turns left out). Without a report the prompt
// says that no LLM summary was made. Without a transcript it says that the
// conversation was not included, why, and where the target can read it
// (Briefing.HistoryTool), never that nothing was exchanged; a transcript that
// fails midway is left out the same way. What Handoff.Share withholds (the
// conversation, the report) is left out, and the prompt says so. Tools that
// know more (tasks, git state, a conversation of their own) pass their own
// function as Briefing.Build. Errors: ctx's, when it ended while the
// transcript was read.
func DefaultBriefing(ctx context.Context, in BriefingInput) (string, error) {
	// What the records alone give: the conversation has no events yet (it
	// is replayed from in.Conversation), and says why the conversation or
	// the report is left out when in.Handoff.Share withholds them.
	r := recap.HandoffInput{
		Title:        "handoff " + string(in.Handoff.ID) + " (attempt " + strconv.Itoa(in.Handoff.Attempt) + ")",
		Mission:      in.Workspace.Mission,
		Report:       in.Handoff.Report,
		Facts:        in.Handoff.Facts,
		Conversation: recap.Input{Omitted: in.ConversationOmitted, HistoryTool: in.HistoryTool},
		Limits:       in.Limits,
	}
	if !in.Handoff.Share.Report() && strings.TrimSpace(in.Handoff.Report) != "" {
		r.ReportOmitted = omitChosen
	}
	for _, i := range in.Instructions {
		r.Instructions = append(r.Instructions, recap.Instruction{ID: string(i.ID), State: string(i.State), Text: i.Text})
	}
	if s := in.Source; s != nil {
		r.Source = recap.SessionRef{ID: string(s.ID), Engine: s.Config.Engine, Model: s.Config.Model, NativeID: s.NativeID,
			ActualModel: s.ActualModel, EngineVersion: s.EngineVersion}
	}
	return workspace.Replay(ctx, in.Conversation, r.Conversation, func(c recap.Input) string {
		r.Conversation = c
		return recap.HandoffPrompt(r)
	})
}

// gatherFacts runs the Briefing.Facts gatherer for h, if any.
func (c *Coordinator) gatherFacts(ctx context.Context, h store.Handoff) string {
	if c.brief.Facts == nil {
		return ""
	}
	in, err := c.briefingInput(ctx, h)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("gathering handoff facts failed", zap.String("handoff", string(h.ID)), zap.Error(err))
		}
		return ""
	}
	since := in.Handoff.CreatedAt
	if in.Source != nil && !in.Source.StartedAt.IsZero() {
		since = in.Source.StartedAt
	}
	return c.brief.Facts(ctx, in.Workspace.Root, since)
}
