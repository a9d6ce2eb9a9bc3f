package handoff

import (
	"context"
	"strconv"

	"github.com/batonhq/baton/recap"
)

// DefaultBriefing builds the target's prompt with recap.HandoffPrompt from
// what the records hold: the workspace's mission, the source session, the
// report, if one was written, the facts gathered (WithFacts), and the
// queued instructions not known to be delivered, by id and state. Without a report the prompt says that no
// LLM summary was made. Tools that know more (tasks, pending instructions,
// git state, the source's transcript) pass their own Briefing that starts
// from RecapInput and fills those in.
func DefaultBriefing(_ context.Context, in BriefingInput) (string, error) {
	return recap.HandoffPrompt(RecapInput(in)), nil
}

// RecapInput is the recap.HandoffInput the records alone give for in.
func RecapInput(in BriefingInput) recap.HandoffInput {
	r := recap.HandoffInput{
		Title:   "handoff " + string(in.Handoff.ID) + " (attempt " + strconv.Itoa(in.Handoff.Attempt) + ")",
		Mission: in.Workspace.Mission,
		Report:  in.Handoff.Report,
		Facts:   in.Handoff.Facts,
	}
	for _, i := range in.Instructions {
		r.Instructions = append(r.Instructions, recap.Instruction{ID: string(i.ID), State: string(i.State), Text: i.Text})
	}
	if s := in.Source; s != nil {
		r.Source = recap.SessionRef{ID: string(s.ID), Engine: s.Config.Engine, Model: s.Config.Model, NativeID: s.NativeID}
	}
	return r
}
