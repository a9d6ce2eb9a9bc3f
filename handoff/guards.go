package handoff

import (
	"context"
)

// Guards are pure: stateless evaluates them for CanFire and
// PermittedTriggers too. They are named functions so that the DOT graph
// names them.

func sourceResumable(f *fire) bool {
	src := f.src()
	return src != nil && src.NativeID != "" && src.Config.Engine == f.h.SourceConfig.Engine
}

func needsReport(f *fire) bool { return f.h.GenerateSummary && f.h.Report == "" }

func wantsReport(ctx context.Context, _ ...any) bool {
	f := fireOf(ctx)
	return needsReport(f) && sourceResumable(f)
}

func reportImpossible(ctx context.Context, _ ...any) bool {
	f := fireOf(ctx)
	return needsReport(f) && !sourceResumable(f)
}

func targetReady(ctx context.Context, _ ...any) bool { return !needsReport(fireOf(ctx)) }

func cleanWithReport(ctx context.Context, _ ...any) bool {
	f := fireOf(ctx)
	return f.exit.Clean() && f.h.Report != ""
}

func notCleanWithReport(ctx context.Context, args ...any) bool { return !cleanWithReport(ctx, args...) }

func stoppedWithReport(ctx context.Context, _ ...any) bool {
	f := fireOf(ctx)
	return f.confirmed && f.h.Report != ""
}

func notStoppedWithReport(ctx context.Context, args ...any) bool {
	return !stoppedWithReport(ctx, args...)
}

func noStopPending(ctx context.Context, _ ...any) bool { return !fireOf(ctx).h.StopUnconfirmed }
