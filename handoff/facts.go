package handoff

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/store"
)

// FactsFunc gathers the mechanical facts of a transfer beside the report
// (git state, checks the source ran), rendered as Markdown, from the
// records and the workspace's root. It runs in the driver, outside any
// store transaction, just before the transfer enters starting; what it
// returns is stored on the handoff (Handoff.Facts) in that transition's
// commit and given to the Briefing. It must be bounded in time and size,
// and should return a short honest line rather than fail: an error is
// logged and the transfer goes on without facts.
type FactsFunc func(ctx context.Context, in BriefingInput) (string, error)

// WithFacts sets how a transfer's facts are gathered (default: none).
// Package handoff/facts gathers git state; GitFacts wires it in.
func WithFacts(fn FactsFunc) Option {
	return func(co *Coordinator) { co.given.Add("WithFacts"); co.facts = fn }
}

// GitFacts adapts a gatherer of a workspace root's facts since a time
// (facts.Func) to a FactsFunc: the root is the workspace's, the time the
// source session's start, or the transfer's creation without a source.
func GitFacts(gather func(ctx context.Context, root string, since time.Time) string) FactsFunc {
	return func(ctx context.Context, in BriefingInput) (string, error) {
		since := in.Handoff.CreatedAt
		if in.Source != nil && !in.Source.StartedAt.IsZero() {
			since = in.Source.StartedAt
		}
		return gather(ctx, in.Workspace.Root, since), nil
	}
}

// gatherFacts runs the FactsFunc for h, if any.
func (c *Coordinator) gatherFacts(ctx context.Context, h store.Handoff) string {
	if c.facts == nil {
		return ""
	}
	in, err := c.briefingInput(ctx, h)
	if err == nil {
		var facts string
		if facts, err = c.facts(ctx, in); err == nil {
			return facts
		}
	}
	if ctx.Err() == nil {
		c.log.Warn("gathering handoff facts failed", zap.String("handoff", string(h.ID)), zap.Error(err))
	}
	return ""
}
