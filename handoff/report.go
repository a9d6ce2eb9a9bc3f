package handoff

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// ReportPrompt is the opening prompt of the source's report-only turn.
const ReportPrompt = `This conversation is being handed off to a fresh session. Do not continue the work.
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
// A submission made with the attempt's valid token but refused (empty,
// over-long, or a different text after one was stored) is recorded in the
// handoff's Error, so that when the turn ends without a report the user
// sees why. A submission with any other token is unauthenticated: it is
// logged and counted (Stats().RejectedReports) and never changes what the
// user sees.
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
	if n := utf8.RuneCountInString(text); n == 0 || n > MaxReportChars || !utf8.ValidString(text) {
		badText = baton.Errorf(ErrInvalidRequest, "the report must be 1..%d characters of UTF-8 after trimming (got %d)", MaxReportChars, n)
	}
	t := baton.ParseToken(tok)
	in := input{trigger: TriggerSubmitReport, report: text}
	_, _, err := c.apply(ctx, string(id), in, func(f *fire) error {
		h := f.row
		refusal = badText
		// The check runs again on a store retry: the trigger follows its
		// latest answer.
		defer func() {
			f.trigger, f.errMsg = TriggerSubmitReport, ""
			if refusal != nil {
				f.trigger, f.errMsg = TriggerReportRefused, "a report submitted with this attempt's token was refused: "+refusal.Error()
			}
		}()
		switch {
		case h.Workspace != ws:
			return baton.Errorf(ErrNotFound, "%s", id)
		case h.State != store.StateGenerating || h.StopRequested:
			return ErrGenerationInactive
		case !h.GenerationToken.Matches(t):
			return ErrTokenRejected
		case refusal != nil:
		case h.Report == text:
			return &unchanged{h: h}
		case h.Report != "":
			refusal = ErrReportConflict
		}
		return nil
	})
	if _, ok := isUnchanged(err); ok {
		return nil
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
	Handoff   Handoff
	Workspace store.Workspace
	// Source is the source session, nil when there was none.
	Source *store.Session
	// Instructions are the workspace's queued instructions not known to be
	// delivered (pending, or unknown: a delivery was not confirmed), oldest
	// first. The target is told of them; none is redelivered silently.
	Instructions []store.Instruction
}

// Briefing builds the opening prompt of a transfer's target. It runs after
// the transaction that entered starting, before the target is launched; an
// error fails the attempt. It must be deterministic for the same input.
type Briefing func(ctx context.Context, in BriefingInput) (string, error)

// briefingInput reads what a Briefing or a FactsFunc is given for h.
func (c *Coordinator) briefingInput(ctx context.Context, h store.Handoff) (BriefingInput, error) {
	in := BriefingInput{Handoff: public(h)}
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
	return in, err
}
