package handoff

import (
	"context"
	"strconv"

	"github.com/batonhq/baton/recap"
)

// DefaultBriefing builds the target's prompt with recap.HandoffPrompt from
// what the records hold: the workspace's mission, the source session, the
// report, if one was written, and the facts gathered (WithFacts). Without a report the prompt says that no
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
	if s := in.Source; s != nil {
		r.Source = recap.SessionRef{ID: string(s.ID), Engine: s.Config.Engine, Model: s.Config.Model, NativeID: s.NativeID}
	}
	return r
}
