package handoff

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/internal/mutant"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Effects run inside the transaction of the firing that enters a state.
// They write records only; engine calls happen after commit (driver.go).

// HandoffDir is where report documents are published, relative to a
// workspace's root. A .gitignore there ignores everything.
const HandoffDir = ".ai/handoffs"

func beginCreate(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	r := f.req
	*f.h = store.Handoff{
		ID: handoffID(f.id), Workspace: r.Workspace, RequestID: r.RequestID, Fingerprint: f.fp,
		State: f.h.State, Attempt: 1, SourceSession: r.SourceSession, TargetConfig: r.Target,
		GenerateSummary: r.GenerateSummary, CreatedAt: f.now,
	}
	ws, err := f.tx.GetWorkspace(r.Workspace)
	if err != nil {
		return err
	}
	f.h.SourceConfig = ws.Config
	if src := f.src(); src != nil {
		f.h.SourceConfig = src.Config
	}
	return take(f)
}

func take(f *fire) error {
	o, err := session.Take(f.tx, f.h.Workspace, f.h.ID, f.c.id, f.now, f.c.leaseTTL)
	f.owner = o
	return err
}

func beginRetry(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.Attempt++
	f.h.StopRequested = false
	f.h.Error = ""
	f.h.TargetSession = ""
	f.h.ReportPath = ""
	return take(f)
}

func beginSkip(ctx context.Context, args ...any) error {
	f := fireOf(ctx)
	f.h.GenerateSummary = false
	f.h.Report = ""
	return beginRetry(ctx, args...)
}

func enterGenerating(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.genToken = baton.NewToken()
	f.h.GenerationToken = f.genToken.Hash()
	f.h.GenerationDeadline = f.now.Add(f.c.genTimeout)
	return setWorkspaceConfig(f, f.h.SourceConfig)
}

func enterStarting(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	clearToken(f)
	ws, err := f.tx.GetWorkspace(f.h.Workspace)
	if err != nil {
		return err
	}
	target, err := f.tx.InsertSession(store.Session{
		ID: baton.SessionID(ids.New("ses")), Workspace: f.h.Workspace, Config: f.h.TargetConfig,
		Status: store.SessionIdle, ActivationOrder: session.RolledBack, CreatedAt: f.now,
	})
	if err != nil {
		return err
	}
	f.h.TargetSession = target.ID
	if ws.Root != "" {
		f.h.ReportPath = filepath.Join(ws.Root, filepath.FromSlash(HandoffDir), string(f.h.ID)+"-"+ids.Random(6)+".md")
	}
	return setWorkspaceConfig(f, f.h.TargetConfig)
}

func enterCompleted(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	clearToken(f)
	t, err := f.tx.GetSession(f.h.TargetSession)
	if err != nil {
		return err
	}
	t.StartedAt = f.now
	if f.trigger == TriggerTargetReady {
		t.NativeID, t.Status = f.nativeID, store.SessionRunning
	} else {
		// The first turn finished before readiness resolved: a normal,
		// ended session.
		t.NativeID = f.exit.NativeID
		t.Status, t.EndedAt, t.EndReason = store.SessionEnded, f.now, "first turn finished"
	}
	if err := f.tx.PutSession(t); err != nil {
		return err
	}
	if _, err := session.Activate(f.tx, t.ID, f.now); err != nil {
		return err
	}
	if _, err := session.RebindWakeups(f.tx, f.h.SourceSession, t.ID, f.now); err != nil {
		return err
	}
	record(f)
	return session.Release(f.tx, f.h.Workspace, f.h.ID, f.now)
}

func enterFailed(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	switch f.trigger {
	case TriggerSourceStopUnconfirmed, TriggerCancelUnconfirmed:
		f.h.StopUnconfirmed = true
	case TriggerGenerationTimedOut, TriggerTargetFailed:
		f.h.StopUnconfirmed = f.h.StopUnconfirmed || !f.confirmed
	}
	if err := settle(f); err != nil {
		return err
	}
	if f.c.bugs.Has(mutant.RebindOnFailure) && f.h.TargetSession != "" {
		if _, err := session.RebindWakeups(f.tx, f.h.SourceSession, f.h.TargetSession, f.now); err != nil {
			return err
		}
	}
	if f.c.bugs.Has(mutant.ReleaseOnFailure) {
		return session.Release(f.tx, f.h.Workspace, f.h.ID, f.now)
	}
	return nil
}

func enterInterrupted(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	if f.trigger == TriggerShutdown && !f.confirmed {
		f.h.StopUnconfirmed = true
	}
	return settle(f)
}

func retakeReservation(ctx context.Context, _ ...any) error { return take(fireOf(ctx)) }

func enterCancelled(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.StopUnconfirmed = false
	if err := settle(f); err != nil {
		return err
	}
	return session.Release(f.tx, f.h.Workspace, f.h.ID, f.now)
}

// settle ends an attempt that did not complete: the generation token is
// cleared, the target rolled back, the source restored as current with its
// configuration, and the attempt recorded.
func settle(f *fire) error {
	clearToken(f)
	if f.errMsg != "" {
		f.h.Error = f.errMsg
	}
	if err := rollbackTarget(f); err != nil {
		return err
	}
	if err := restoreSource(f); err != nil {
		return err
	}
	record(f)
	return nil
}

func clearToken(f *fire) {
	f.h.GenerationToken = baton.TokenHash{}
	f.h.GenerationDeadline = time.Time{}
}

func rollbackTarget(f *fire) error {
	if f.h.TargetSession == "" {
		return nil
	}
	t, err := f.tx.GetSession(f.h.TargetSession)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	t.ActivationOrder = session.RolledBack
	if t.Status != store.SessionEnded {
		t.Status, t.EndedAt, t.EndReason = store.SessionEnded, f.now, "transfer rolled back"
	}
	return f.tx.PutSession(t)
}

func restoreSource(f *fire) error {
	if f.c.bugs.Has(mutant.NoRestoreConfig) {
		return nil
	}
	if err := setWorkspaceConfig(f, f.h.SourceConfig); err != nil {
		return err
	}
	if f.src() == nil {
		return session.Refresh(f.tx, f.h.Workspace, f.now)
	}
	_, err := session.Activate(f.tx, f.source.ID, f.now)
	return err
}

func setWorkspaceConfig(f *fire, cfg baton.EngineConfig) error {
	ws, err := f.tx.GetWorkspace(f.h.Workspace)
	if err != nil {
		return err
	}
	ws.Config, ws.UpdatedAt = cfg, f.now
	return f.tx.PutWorkspace(ws)
}

// record writes how the current attempt ended into the history. A re-entry
// (same attempt, same outcome) replaces its record; anything else appends,
// so a failure reconciled to interrupted keeps the failure's error.
func record(f *fire) {
	rec := store.AttemptRecord{Attempt: f.h.Attempt, TargetSession: f.h.TargetSession, Outcome: f.h.State, Error: f.h.Error, EndedAt: f.now}
	if n := len(f.h.History); n > 0 && f.h.History[n-1].Attempt == rec.Attempt && f.h.History[n-1].Outcome == rec.Outcome {
		f.h.History[n-1] = rec
		return
	}
	f.h.History = append(f.h.History, rec)
}

func storeReport(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.Report = f.report
	return nil
}
