package handoff

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// reportPrompt is the opening prompt of the source's report-only turn.
const reportPrompt = `This conversation is being handed off to a fresh session. Do not continue the work.
Write a handoff report in Markdown for the engineer who takes over, and submit it with the
submit_session_handoff tool. Cover, with facts kept apart from assumptions:

1. The objective and its constraints.
2. Decisions taken and the reasons for them.
3. Verified progress, and the checks you actually ran (commands and results).
4. Approaches that failed, and why.
5. Open questions.
6. The next action to take.

Keep it under 24,000 characters. Read files if you must, but change nothing.`

// SubmitReport stores the report of a handoff's report-only turn. tok must
// be the generation token of the current attempt, which the engine received
// in its ReportCredentials; text is trimmed and must be 1..MaxReportChars
// characters of UTF-8. Submitting the same text again is accepted (the call
// is safe to retry); a different text is refused.
//
// A submission made with the attempt's valid token but refused (empty or
// over-long) before a report was stored is recorded in the handoff's
// Error, so that when the turn ends without a report the user sees why.
// Once the report is stored, a refused later submission (a different
// text, or an invalid one) changes nothing: it is logged, so a settled
// handoff shows only its own outcome. A submission with any other token
// is unauthenticated: it is logged and never changes what the user sees.
//
// Errors: ErrInvalidRequest (empty or over-long text), ErrNotFound (unknown
// handoff or another workspace's), ErrGenerationInactive (the handoff is not
// generating a report), ErrTokenRejected (not the current attempt's token),
// ErrReportConflict, the store's.
func (c *Coordinator) SubmitReport(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID, tok string, text string) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	text = strings.TrimSpace(text)
	var badText, refusal error
	if err := baton.CheckField("report", text); err != nil {
		badText = fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	t := baton.ParseToken(tok)
	in := input{trigger: triggerSubmitReport, report: text}
	late := false
	_, f, err := c.apply(ctx, id, in, func(f *fire) error {
		h := f.row
		refusal, late = badText, false
		// The check runs again on a store retry: the trigger follows its
		// latest answer.
		defer func() {
			f.trigger, f.errMsg = triggerSubmitReport, ""
			if refusal != nil {
				f.trigger, f.errMsg = triggerReportRefused, "a report submitted with this attempt's token was refused: "+refusal.Error()
			}
		}()
		switch {
		case h.Workspace != ws:
			return baton.Errorf(ErrNotFound, "%s", id)
		case h.State != store.StateGenerating || h.StopRequested:
			return ErrGenerationInactive
		case !h.GenerationToken.Matches(t):
			return ErrTokenRejected
		case h.Report != "" && h.Report == text:
			return &unchanged{h: h}
		case h.Report != "":
			// The handoff has its report: a later refusal is the
			// submitter's problem, not the handoff's outcome. Nothing is
			// written.
			late = true
			if refusal == nil {
				refusal = ErrReportConflict
			}
			return refusal
		}
		return nil
	})
	if err == nil && f == nil {
		return nil // unchanged
	}
	if late {
		c.lateReports.Add(1)
		c.log.Warn("report submission refused after the report was stored", zap.String("handoff", string(id)),
			zap.String("workspace", string(ws)), zap.Error(refusal))
		return refusal
	}
	switch {
	case errors.Is(err, errNotPermitted):
		return ErrGenerationInactive
	case errors.Is(err, ErrTokenRejected):
		c.rejected.Add(1)
		c.log.Warn("report submission with a rejected token", zap.String("handoff", string(id)), zap.String("workspace", string(ws)))
		return err
	case err != nil:
		return err
	}
	return refusal
}

// BriefingInput is what a Briefing builds the target's prompt from.
type BriefingInput struct {
	Handoff   store.Handoff
	Workspace store.Workspace
	// Source is the source session, nil when there was none.
	Source *store.Session
	// Instructions are the workspace's queued instructions not known to be
	// delivered (pending, or unknown: a delivery was not confirmed), oldest
	// first. The target is told of them; none is redelivered silently.
	Instructions []store.Instruction
	// Conversation is the source session's conversation as its engine
	// recorded it (an engine.Transcriber),
	// every event marked with its turn. Nil when none is to be had (no
	// source session, an engine that keeps no transcripts or none of it) or
	// when Handoff.Share leaves it out: ConversationOmitted then says why.
	Conversation        iter.Seq2[transcript.Event, error]
	ConversationOmitted string
	// HistoryTool names the tool the target can call to read the source
	// conversation (Briefing.HistoryTool); blank when it has none, or when
	// Handoff.Share leaves the conversation out.
	HistoryTool string
	// Limits bound the briefing and say what to redact
	// (Briefing.Limits).
	Limits recap.HandoffLimits
}

// briefingInput reads what a briefing is given for h.
func (c *Coordinator) briefingInput(ctx context.Context, h store.Handoff) (BriefingInput, error) {
	in := BriefingInput{Handoff: public(h), Limits: c.brief.Limits}
	err := c.store.View(ctx, func(tx store.Tx) error {
		ws, err := tx.GetWorkspace(h.Workspace)
		if err != nil {
			return err
		}
		in.Workspace = ws
		if in.Instructions, err = tx.OpenInstructions(h.Workspace); err != nil {
			return err
		}
		if h.SourceSession != "" {
			s, err := tx.GetSession(h.SourceSession)
			if err == nil {
				in.Source = &s
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return in, err
	}
	if !h.Share.Conversation() {
		in.ConversationOmitted = omitChosen
		return in, nil
	}
	in.HistoryTool = c.brief.HistoryTool
	in.Conversation, in.ConversationOmitted, err = c.sessions.Conversation(ctx, h.SourceSession)
	return in, err
}

// omitChosen is why a briefing leaves out what Share withholds.
const omitChosen = "the user chose not to share it"

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
		Instructions: in.Instructions,
		Conversation: recap.Input{Omitted: in.ConversationOmitted, HistoryTool: in.HistoryTool},
		Limits:       in.Limits,
	}
	if !in.Handoff.Share.Report() && strings.TrimSpace(in.Handoff.Report) != "" {
		r.ReportOmitted = omitChosen
	}
	if in.Source != nil {
		r.Source = *in.Source
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
