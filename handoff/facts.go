package handoff

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/store"
)

// WithFacts sets how a transfer's facts are gathered beside the report
// (default: none): gather returns the facts of the workspace's root since
// the source session started (or, without a source, since the transfer was
// created), rendered as Markdown; facts.Func of package handoff/facts
// gathers git state. It runs in the driver, outside any store
// transaction, just before the transfer enters starting; what it returns is
// stored on the handoff (Handoff.Facts) in that transition's commit and
// given to the briefing. It must be bounded in time and size, and should
// return a short honest line rather than nothing when it cannot tell.
func WithFacts(gather func(ctx context.Context, root string, since time.Time) string) Option {
	return func(co *Coordinator) { co.given.Add("WithFacts"); co.facts = gather }
}

// gatherFacts runs the WithFacts gatherer for h, if any.
func (c *Coordinator) gatherFacts(ctx context.Context, h store.Handoff) string {
	if c.facts == nil {
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
	return c.facts(ctx, in.Workspace.Root, since)
}
