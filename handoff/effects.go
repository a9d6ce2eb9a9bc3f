package handoff

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// Effects run inside the transaction of the firing that enters a state.
// They write records only; engine calls happen after commit (driver.go).

// handoffDir is where report documents are published, relative to a
// workspace's root. A .gitignore there ignores everything.
const handoffDir = ".ai/handoffs"

func beginCreate(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	r := f.req
	*f.h = store.Handoff{
		ID: f.id, Workspace: r.Workspace, RequestID: r.RequestID, Fingerprint: f.fp,
		State: f.h.State, Attempt: 1, SourceSession: r.SourceSession, TargetConfig: r.Target,
		GenerateSummary: r.GenerateSummary, Native: r.Native, CreatedAt: f.now, Reason: f.reason,
	}
	ws, err := f.tx.GetWorkspace(r.Workspace)
	if err != nil {
		return err
	}
	f.h.SourceConfig = ws.Config
	f.h.Share = cmp.Or(r.Share, ws.Share, baton.ShareConversation)
	if src := f.src(); src != nil {
		f.h.SourceConfig = src.Config
	}
	return take(f)
}

func take(f *fire) error {
	tok, epoch, err := workspace.Take(f.tx, f.h.Workspace, f.h.ID, workspace.Lease{Holder: f.c.id, Store: f.c.incarnation, Expires: f.now.Add(f.c.leaseTTL)}, f.now)
	f.owner = workspace.Owner{Token: tok, Epoch: epoch}
	return err
}

func beginRetry(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.Attempt++
	f.h.StopRequested, f.h.Error, f.h.ReportPath = false, "", ""
	f.h.TargetSession = ""
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
	if err := recordLaunch(f, f.h.SourceSession, f.h.SourceConfig.Engine); err != nil {
		return err
	}
	return setWorkspaceConfig(f, f.h.SourceConfig)
}

// recordLaunch records, in the firing's transaction, the launch the state
// entered will make after commit (the report-only turn, the target), so
// that it is durable before the spawn.
func recordLaunch(f *fire, sess baton.SessionID, eng string) error {
	r, err := f.tx.GetReservation(f.h.Workspace)
	if err != nil {
		return err
	}
	f.launch = workspace.NewLaunchID()
	return workspace.RecordLaunch(f.tx, store.Launch{
		ID: f.launch, Workspace: f.h.Workspace, Session: sess, Handoff: f.h.ID, Attempt: f.h.Attempt,
		Holder: f.c.sessions.InstanceID(), Host: f.c.sessions.Host(), Engine: eng, Epoch: r.Epoch, CreatedAt: f.now, UpdatedAt: f.now,
	})
}

func enterStarting(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	clearToken(f)
	ws, err := f.tx.GetWorkspace(f.h.Workspace)
	if err != nil {
		return err
	}
	if f.facts != "" {
		f.h.Facts = f.facts
	}
	row := store.Session{
		ID: baton.SessionID(ids.New("ses")), Workspace: f.h.Workspace, Config: f.h.TargetConfig,
		Status: store.SessionIdle, ActivationOrder: workspace.RolledBack, CreatedAt: f.now,
	}
	if src := f.src(); f.h.Native && src != nil {
		row.NativeID = src.NativeID
	}
	if err := f.tx.PutSession(row); err != nil {
		return err
	}
	f.h.TargetSession = row.ID
	if err := recordLaunch(f, row.ID, f.h.TargetConfig.Engine); err != nil {
		return err
	}
	if ws.Root != "" {
		f.h.ReportPath = filepath.Join(ws.Root, filepath.FromSlash(handoffDir), string(f.h.ID)+"-"+ids.Random(6)+".md")
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
	workspace.RecordActual(&t, f.actual)
	switch {
	case f.trigger == triggerTargetReady && t.Status == store.SessionEnded:
		// Its first turn ended before this commit: the end was recorded
		// first and stands (the store orders the two).
		t.NativeID, t.StartedAt = f.nativeID, t.EndedAt
	case f.trigger == triggerTargetReady:
		t.NativeID, t.Status = f.nativeID, store.SessionRunning
	default:
		// The first turn finished before readiness resolved: a normal,
		// ended session.
		t.NativeID = f.exit.NativeID
		t.Status, t.EndedAt, t.EndReason = store.SessionEnded, f.now, "first turn finished"
		workspace.RecordUsage(&t, f.exit.Usage, f.exitLaunch)
	}
	if err := f.tx.PutSession(t); err != nil {
		return err
	}
	if _, err := workspace.Activate(f.tx, t.ID, f.now); err != nil {
		return err
	}
	if _, err := workspace.RebindWakeups(f.tx, f.h.Workspace, f.h.SourceSession, t.ID, f.now); err != nil {
		return err
	}
	record(f)
	return workspace.Release(f.tx, f.h.Workspace, f.h.ID, f.now)
}

func enterFailed(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	switch f.trigger {
	case triggerCancelUnconfirmed:
		// The stop request has been carried out, unconfirmed: the user
		// must stop again, and a new request is a new one.
		f.h.StopUnconfirmed, f.h.StopRequested = true, false
	case triggerSourceStopUnconfirmed:
		f.h.StopUnconfirmed = true
	case triggerGenerationTimedOut, triggerTargetFailed:
		f.h.StopUnconfirmed = f.h.StopUnconfirmed || !f.confirmed
	}
	if err := settle(f); err != nil {
		return err
	}
	if f.takeOver {
		return take(f)
	}
	return nil
}

func enterInterrupted(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	// Only Reconcile (every launch of the dead process was confirmed
	// gone, or not) and Shutdown (it stopped what this process runs
	// there) enter it: whether that stop was confirmed is now the whole truth.
	f.h.StopUnconfirmed = !f.confirmed
	if f.trigger == triggerShutdown {
		f.h.StopRequested = false
	}
	return settle(f)
}

func retakeReservation(ctx context.Context, _ ...any) error {
	return take(fireOf(ctx))
}

func enterCancelled(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.StopUnconfirmed = false
	if err := settle(f); err != nil {
		return err
	}
	return workspace.Release(f.tx, f.h.Workspace, f.h.ID, f.now)
}

// settle ends an attempt that did not complete: the generation token is
// cleared, the target rolled back, the source restored as current with its
// configuration, and the attempt recorded.
func settle(f *fire) error {
	clearToken(f)
	switch {
	case f.errMsg == "":
	case f.from == store.StateGenerating && f.h.Error != "":
		// A submission of this attempt was refused: say why beside how
		// the turn ended.
		f.h.Error = f.errMsg + " (" + f.h.Error + ")"
	default:
		f.h.Error = f.errMsg
	}
	if f.h.TargetSession != "" {
		err := workspace.Rollback(f.tx, f.h.TargetSession, "transfer rolled back", f.now)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if err := setWorkspaceConfig(f, f.h.SourceConfig); err != nil {
		return err
	}
	if f.src() == nil {
		if err := workspace.Recompute(f.tx, f.h.Workspace, f.now); err != nil {
			return err
		}
	} else if _, err := workspace.Activate(f.tx, f.source.ID, f.now); err != nil {
		return err
	}
	record(f)
	return f.c.sessions.CloseUnspawned(f.tx, f.h.Workspace, f.h.ID)
}

func clearToken(f *fire) {
	f.h.GenerationToken = baton.TokenHash{}
	f.h.GenerationDeadline = time.Time{}
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

// storeReport stores the report; a refusal recorded before it (see
// recordRefusal) no longer explains anything and is cleared.
func storeReport(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.Report = f.report
	f.h.Error = ""
	return nil
}

// recordRefusal keeps, in the handoff's error, why a submission made with
// this attempt's token was refused: the agent's refusal is what the user
// needs to see when the turn then ends without a report.
func recordRefusal(ctx context.Context, _ ...any) error {
	f := fireOf(ctx)
	f.h.Error = f.errMsg
	return nil
}
