package handofftest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// edit is one change a mutation makes to a source file of the module:
// old, which must occur exactly once in file (so that a change to the code
// cannot leave the bug silently unplanted), becomes new.
type edit struct {
	file     string // from the module's root
	old, new string
}

// mutationBugs are the bugs no wrapper can express: each is a change to
// the source of handoff or session, applied to a copy of the file that a
// build reads instead of the original (go test -overlay), so the code in
// the repository carries no trace of them.
func mutationBugs() []plantedBug {
	mut := func(name, family string, edits ...edit) plantedBug {
		return plantedBug{name: name, family: family, how: "mutation", edits: edits}
	}
	// The line of the target launch that both RetryKeepsTarget and
	// TargetActivatedEarly plant their bug before.
	const setTarget = "\tf.h.TargetSession = row.ID\n"
	return []plantedBug{
		// The three bugs found in the code before this harness, kept planted.
		mut("StopOnAnyNodeConfirmed", "fencing", edit{"handoff/stop.go",
			"\tcase lease == leaseLive:\n\t\treturn c.awaitStop(ctx, row, seq)\n", ""}),
		mut("EarlyEndBeforeReadyLost", "launch races", edit{"session/processes.go",
			"s.endWith(id, endReason(st), false, true, launch, &st)", "s.endWith(id, endReason(st), false, false, launch, &st)"}),
		mut("ShutdownKeepsUnconfirmed", "shutdown", edit{"handoff/effects.go",
			"stop was confirmed is now the whole truth.\n\tf.h.StopUnconfirmed = !f.confirmed\n",
			"stop was confirmed is now the whole truth.\n\tf.h.StopUnconfirmed = !f.confirmed || (f.trigger == triggerShutdown && f.h.StopUnconfirmed)\n"}),
		// The earlier planted set.
		mut("ReplayAnyFingerprint", "idempotency", edit{"handoff/request.go",
			"case err == nil && prev.Fingerprint == fp:", "case err == nil:"}),
		mut("ReconcileRelaunches", "fencing", edit{"handoff/restart.go",
			"\t\tout = append(out, public(h))\n\t}\n\treturn out, nil\n",
			"\t\t_, _ = c.Decide(ctx, h.Workspace, h.ID, Retry)\n\t\tout = append(out, public(h))\n\t}\n\treturn out, nil\n"}),
		mut("NoTokenCheck", "attempt tagging", edit{"handoff/report.go",
			"case !h.GenerationToken.Matches(t):", "case !h.GenerationToken.Matches(t) && false:"}),
		mut("UnconfirmedStopIsStop", "attempt tagging", edit{"handoff/stop.go",
			"\tif !out.Confirmed() {\n\t\tin = input{trigger: triggerCancelUnconfirmed,", "\tif false {\n\t\tin = input{trigger: triggerCancelUnconfirmed,"}),
		// Issue families.
		mut("ReconcileNoRetake", "fencing", edit{"handoff/effects.go",
			"func retakeReservation(ctx context.Context, _ ...any) error {\n\treturn take(fireOf(ctx))\n",
			"func retakeReservation(ctx context.Context, _ ...any) error {\n\treturn nil\n"}),
		mut("OwnerNotChecked", "fencing", edit{"internal/workspace/reservation.go",
			"\tif !r.Held {\n\t\tif token.IsZero() {\n\t\t\treturn checkDue(tx, ws)\n\t\t}\n\t\treturn nil\n\t}\n\tif token.IsZero() {",
			"\tif true {\n\t\treturn nil\n\t}\n\tif token.IsZero() {"}),
		mut("StaleCallbackApplied", "attempt tagging", edit{"handoff/fire.go",
			"if h := f.row; h.Attempt != attempt || h.StopRequested || !isActive(h.State) {",
			"if h := f.row; h.StopRequested || !isActive(h.State) {"}),
		mut("CallbackAfterStop", "attempt tagging", edit{"handoff/fire.go",
			"if h := f.row; h.Attempt != attempt || h.StopRequested || !isActive(h.State) {",
			"if h := f.row; h.Attempt != attempt || !isActive(h.State) {"}),
		mut("TimeoutIgnoresUnconfirmed", "attempt tagging", edit{"handoff/driver.go",
			"input{trigger: triggerGenerationTimedOut, confirmed: out.Confirmed(),",
			"input{trigger: triggerGenerationTimedOut, confirmed: true,"}),
		mut("RetryKeepsTarget", "launch races",
			edit{"handoff/effects.go", "\tf.h.TargetSession = \"\"\n", ""},
			edit{"handoff/effects.go", setTarget, "\tif f.h.TargetSession != \"\" {\n\t\trow.ID = f.h.TargetSession\n\t}\n" + setTarget}),
		mut("TargetActivatedEarly", "launch races", edit{"handoff/effects.go",
			setTarget, "\t_, _ = workspace.Activate(f.tx, row.ID, f.now)\n" + setTarget}),
		mut("ShutdownNoSettle", "shutdown", edit{"handoff/restart.go",
			"\t\tin := input{trigger: triggerShutdown, confirmed: out.Confirmed(), errMsg: msg}\n",
			"\t\tin := input{trigger: triggerShutdown, confirmed: out.Confirmed(), errMsg: msg}\n\t\tcontinue\n"}),
		mut("WakeupFiredWhileReserved", "sessions", edit{"session/instructions.go",
			"Reserved(tx, cur.Workspace); err != nil || r {", "Reserved(tx, cur.Workspace); err != nil || r && cur.ID == \"\" {"}),

		// Refusal reasons: each is refused, for the wrong reason.
		// Anchor: the switch of Coordinator.SubmitReport (handoff/report.go).
		mut("LateReportTokenRejected", "refusal reasons", edit{"handoff/report.go",
			"\t\tcase h.State != store.StateGenerating || h.StopRequested:\n\t\t\treturn ErrGenerationInactive\n",
			"\t\tcase h.State != store.StateGenerating || h.StopRequested:\n\t\t\treturn ErrTokenRejected\n"}),
		// Anchor: the switch of Coordinator.SubmitReport (handoff/report.go).
		mut("ReportOtherWorkspace", "refusal reasons", edit{"handoff/report.go",
			"\t\tcase h.Workspace != ws:\n\t\t\treturn baton.Errorf(ErrNotFound, \"%s\", id)\n", ""}),
		// Anchor: the epoch check of CheckWritable (internal/workspace/reservation.go).
		mut("StaleOwnerBusy", "refusal reasons", edit{"internal/workspace/reservation.go",
			"return baton.Errorf(ErrStaleEpoch, \"token of epoch %d, reservation at %d\", epoch, r.Epoch)",
			"return baton.Errorf(ErrWorkspaceBusy, \"token of epoch %d, reservation at %d\", epoch, r.Epoch)"}),

		// Credentials: a wrong token at the current epoch, a right one at a
		// stale epoch, the stored report text again.
		// Anchor: the token check of CheckWritable (internal/workspace/reservation.go).
		mut("WrongTokenAccepted", "credentials", edit{"internal/workspace/reservation.go",
			"\tif !r.Owner.Matches(token) {\n\t\treturn ErrWorkspaceBusy\n\t}\n", ""}),
		// Anchor: the epoch check of CheckWritable (internal/workspace/reservation.go).
		mut("StaleEpochAccepted", "credentials", edit{"internal/workspace/reservation.go",
			"\tif epoch != r.Epoch {", "\tif epoch > r.Epoch {"}),
		// Anchor: the token case of Coordinator.SubmitReport (handoff/report.go).
		mut("ForgedSameReportAccepted", "credentials", edit{"handoff/report.go",
			"case !h.GenerationToken.Matches(t):", "case !h.GenerationToken.Matches(t) && h.Report != text:"}),
		// Anchor: the state case of Coordinator.SubmitReport (handoff/report.go).
		mut("LateSameReportAsToken", "credentials", edit{"handoff/report.go",
			"\t\tcase h.State != store.StateGenerating || h.StopRequested:\n",
			"\t\tcase h.Report != text && (h.State != store.StateGenerating || h.StopRequested):\n"}),

		// Records mid-attempt: the target row, the history, rolled-back rows.
		// Anchor: the target row enterStarting inserts (handoff/effects.go).
		mut("TargetRowSourceConfig", "records mid-attempt", edit{"handoff/effects.go",
			"Workspace: f.h.Workspace, Config: f.h.TargetConfig,\n", "Workspace: f.h.Workspace, Config: f.h.SourceConfig,\n"}),
		// Anchor: the target row enterStarting inserts (handoff/effects.go).
		mut("TargetRowActivatable", "records mid-attempt", edit{"handoff/effects.go",
			"Status: store.SessionIdle, ActivationOrder: workspace.RolledBack, CreatedAt: f.now,", "Status: store.SessionIdle, CreatedAt: f.now,"}),
		// Anchor: the end of settle (handoff/effects.go).
		mut("HistorySkipsUnsettled", "records mid-attempt", edit{"handoff/effects.go",
			"\trecord(f)\n\treturn f.c.sessions.CloseUnspawned(f.tx, f.h.Workspace, f.h.ID)\n",
			"\treturn f.c.sessions.CloseUnspawned(f.tx, f.h.Workspace, f.h.ID)\n"}),
		// Anchor: the re-entry test of record (handoff/effects.go).
		mut("HistoryReplacesOutcome", "records mid-attempt", edit{"handoff/effects.go",
			"f.h.History[n-1].Attempt == rec.Attempt && f.h.History[n-1].Outcome == rec.Outcome {", "f.h.History[n-1].Attempt == rec.Attempt {"}),
		// Anchor: the status test of Rollback (internal/workspace/activation.go).
		mut("RolledBackTargetIdle", "records mid-attempt", edit{"internal/workspace/activation.go",
			"\tif s.Status != store.SessionEnded {\n\t\ts.Status, s.EndedAt, s.EndReason = store.SessionEnded, now, reason\n",
			"\tif s.Status == store.SessionRunning {\n\t\ts.Status, s.EndedAt, s.EndReason = store.SessionEnded, now, reason\n"}),

		// The instruction queue.
		// Anchor: the reservation check of Service.Message (session/instructions.go).
		mut("MessageQueuedWhileReserved", "instruction queue", edit{"session/instructions.go",
			"\t\tif err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {\n\t\t\treturn err\n\t\t}\n\t\treturn tx.PutInstruction(in)\n",
			"\t\treturn tx.PutInstruction(in)\n"}),
		// Anchor: the delivered case of Service.CancelInstruction (session/instructions.go).
		mut("CancelDelivered", "instruction queue", edit{"session/instructions.go",
			"\t\tcase store.InstructionDelivered:\n\t\t\treturn baton.Errorf(errInstructionDelivered, \"%s\", id)\n", ""}),
		// Anchor: the cancelled case of Service.ResendInstruction (session/instructions.go).
		mut("ResendCancelled", "instruction queue", edit{"session/instructions.go",
			"\t\tcase store.InstructionCancelled:\n\t\t\treturn baton.Errorf(errInstructionCancelled, \"%s\", id)\n", ""}),
		// Anchor: the OnExit of Service.launchPicked (session/processes.go).
		mut("QueueNotDrainedAfterTurn", "instruction queue", edit{"session/processes.go",
			"\t\ts.afterTurn(sess.Workspace) // the next queued instruction, if any\n", ""}),
		// Anchor: the pick of the oldest pending instruction in Service.DeliverPending (session/instructions.go).
		mut("QueueNewestFirst", "instruction queue", edit{"session/instructions.go",
			"\t\ti := slices.IndexFunc(open, func(in store.Instruction) bool { return in.State == store.InstructionPending })\n",
			"\t\topen = slices.Clone(open)\n\t\tslices.Reverse(open)\n\t\ti := slices.IndexFunc(open, func(in store.Instruction) bool { return in.State == store.InstructionPending })\n"}),

		// Lease takeover: a surviving node takes a crashed node's transfer.
		// Anchor: the holder test of Coordinator.renews (handoff/restart.go).
		mut("RenewAnyHolder", "lease takeover", edit{"handoff/restart.go",
			"return r.Held && r.Handoff == h.ID && c.holds(r)", "return r.Held && r.Handoff == h.ID"}),
		// Anchor: the renewal line of Coordinator.renewLeases (handoff/restart.go).
		mut("RenewFromOldExpiry", "lease takeover", edit{"handoff/restart.go",
			"r.LeaseExpires, r.UpdatedAt = now.Add(c.leaseTTL), now", "r.LeaseExpires, r.UpdatedAt = r.LeaseExpires.Add(c.leaseTTL), now"}),
		// Anchor: the renewal line of Coordinator.renewLeases (handoff/restart.go).
		mut("RenewWithMargin", "lease takeover", edit{"handoff/restart.go",
			"r.LeaseExpires, r.UpdatedAt = now.Add(c.leaseTTL), now", "r.LeaseExpires, r.UpdatedAt = now.Add(c.leaseTTL+c.leaseTTL/3), now"}),
		// Anchor: the lease line of Take (internal/workspace/reservation.go).
		mut("LeaseHolderKeptOnRetake", "lease takeover", edit{"internal/workspace/reservation.go",
			"\tr.LeaseHolder, r.LeaseStore, r.LeaseExpires = lease.Holder, lease.Store, lease.Expires\n",
			"\tif r.LeaseHolder == \"\" {\n\t\tr.LeaseHolder = lease.Holder\n\t}\n\tr.LeaseStore, r.LeaseExpires = lease.Store, lease.Expires\n"}),
		// Anchor: the lease line of Take (internal/workspace/reservation.go).
		mut("ExpiryKeptOnRetake", "lease takeover", edit{"internal/workspace/reservation.go",
			"\tr.LeaseHolder, r.LeaseStore, r.LeaseExpires = lease.Holder, lease.Store, lease.Expires\n",
			"\tr.LeaseHolder, r.LeaseStore = lease.Holder, lease.Store\n\tif r.LeaseExpires.IsZero() {\n\t\tr.LeaseExpires = lease.Expires\n\t}\n"}),

		// Reconcile meeting a stop request a gone node never carried out.
		// Anchor: the stop-request test of Coordinator.Reconcile (handoff/restart.go).
		mut("ReconcileIgnoresStopRequest", "stop requests", edit{"handoff/restart.go",
			"\t\tif p.StopRequested {\n", "\t\tif false {\n"}),
		// Anchor: the stop-request input of Coordinator.Reconcile (handoff/restart.go).
		mut("ReconcileStopRequestNoTake", "stop requests", edit{"handoff/restart.go",
			"\t\t\tin = input{trigger: triggerCancelUnconfirmed, takeOver: true,", "\t\t\tin = input{trigger: triggerCancelUnconfirmed,"}),

		// Legacy rows (activation order 0): the timestamp fallback.
		// Anchor: keep in implicitResume (internal/workspace/rank.go).
		mut("ImplicitResumeAnyAccount", "legacy rows", edit{"internal/workspace/rank.go",
			"keep := func(s store.Session) bool { return s.NativeID != \"\" && s.Config.SameAccount(cfg) }",
			"keep := func(s store.Session) bool { return s.NativeID != \"\" }"}),
		// Anchor: the ranking walk of implicitResume (internal/workspace/rank.go).
		mut("ImplicitResumeSkipsLegacy", "legacy rows", edit{"internal/workspace/rank.go",
			"\t\t\tif keep(s) {", "\t\t\tif keep(s) && s.ActivationOrder > 0 {"}),
		// Anchor: lastActive (internal/workspace/activation.go).
		mut("LegacyEndIgnored", "legacy rows", edit{"internal/workspace/activation.go",
			"\tif s.EndedAt.After(s.StartedAt) {", "\tif false && s.EndedAt.After(s.StartedAt) {"}),
		// Anchor: the start-time tie-break of moreCurrent (internal/workspace/activation.go).
		mut("LegacyTieReversed", "legacy rows", edit{"internal/workspace/activation.go",
			"if c := b.StartedAt.Compare(a.StartedAt); c != 0 {", "if c := a.StartedAt.Compare(b.StartedAt); c != 0 {"}),

		// The same families elsewhere: the session service, the change
		// feed, launch records, memstore and badgerstore.
		// Anchor: the reservation check of Service.ResendInstruction (session/instructions.go).
		mut("ResendWhileReserved", "instruction queue", edit{"session/instructions.go",
			"\t\tif err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tswitch in.State {\n\t\tcase store.InstructionCancelled:\n\t\t\treturn baton.Errorf(",
			"\t\tswitch in.State {\n\t\tcase store.InstructionCancelled:\n\t\t\treturn baton.Errorf("}),
		// Anchor: the reservation check of Service.CancelInstruction (session/instructions.go).
		mut("CancelWhileReserved", "instruction queue", edit{"session/instructions.go",
			"\t\tif err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tswitch in.State {\n\t\tcase store.InstructionCancelled:\n\t\t\tout = in\n",
			"\t\tswitch in.State {\n\t\tcase store.InstructionCancelled:\n\t\t\tout = in\n"}),
		// Anchor: the reservation check of Service.ArchiveWorkspace (session/service.go).
		mut("ArchiveWhileReserved", "refusal reasons", edit{"session/service.go",
			"\t\tif err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif w.Archived {\n\t\t\treturn nil\n",
			"\t\tif w.Archived {\n\t\t\treturn nil\n"}),
		// Anchor: the notification after a commit in Store.Update (store/memstore/memstore.go).
		mut("FeedNotNotified", "change feed", edit{"store/memstore/memstore.go",
			"\ts.subs.Notify(grown)\n", "\ts.subs.Notify(grown[:0])\n"}),
		// Anchor: the live index of state.indexLaunch (store/memstore/records.go).
		mut("MemLaunchStaysLive", "launch records", edit{"store/memstore/records.go",
			"live := in && !l.Gone", "live := in && (!l.Gone || l.Workspace != \"\")"}),
		// Anchor: the order of tx.instructionsIn (store/memstore/records.go).
		mut("MemInstructionsNewestFirst", "instruction queue", edit{"store/memstore/records.go",
			"maps.Keys(idx[ws]), bySeq)", "maps.Keys(idx[ws]), func(a, b row[store.Instruction]) int { return bySeq(b, a) })"}),
		// Anchor: the pending case of Service.ResendInstruction (session/instructions.go).
		mut("ResendDeliveredIgnored", "instruction queue", edit{"session/instructions.go",
			"\t\tcase store.InstructionPending:\n\t\t\treturn nil\n", "\t\tcase store.InstructionPending, store.InstructionDelivered:\n\t\t\treturn nil\n"}),
		// Anchor: the open index of state.indexInstruction (store/memstore/records.go).
		mut("MemOpenIndexUnknownOnly", "instruction queue", edit{"store/memstore/records.go",
			"in && i.State.Open())", "in && i.State == store.InstructionUnknown)"}),
		// Reaps that do not confirm, without a take.
		// Anchor: the outcome test of Service.reapRecord (session/launch.go).
		mut("ReapTimeoutConfirms", "reaps", edit{"session/launch.go",
			"\t\tif !out.Confirmed() {\n", "\t\tif out == engine.Failed {\n"}),
		// Anchor: the outcome test of Service.reapRecord (session/launch.go).
		mut("ReapErrorIgnored", "reaps", edit{"session/launch.go",
			"\t\tif !out.Confirmed() {\n\t\t\tif rerr == nil {\n", "\t\tif !out.Confirmed() && rerr == nil {\n\t\t\tif rerr == nil {\n"}),
		// Anchor: the unconfirmed case of Service.reap (session/launch.go).
		mut("ReapUnconfirmedDropped", "reaps", edit{"session/launch.go",
			"\t\t\tres.Unconfirmed = append(res.Unconfirmed, r)\n", ""}),
		// Anchor: the skip test of Service.reap (session/launch.go).
		mut("ReapOwnLaunches", "reaps", edit{"session/launch.go",
			"if s.owns(l.ID) || (keep != nil && keep(l.Holder)) {", "if keep != nil && keep(l.Holder) {"}),
		// Anchor: the stray-launch check of Service.Start (session/processes.go).
		mut("StartBesideStray", "reaps", edit{"session/processes.go",
			"if err := s.strayLaunch(tx, ws.ID); err != nil {", "if err := s.strayLaunch(tx, ws.ID); err != nil && req.Session != \"\" {"}),
		// The bugs the harness used not to catch.
		// Anchor: the reservation test of Service.DeliverPending (session/instructions.go).
		mut("DeliverWhileReserved", "instruction queue", edit{"session/instructions.go",
			"if w.Archived || workspace.CheckWritable(tx, ws, baton.Token{}, 0) != nil {", "if w.Archived {"}),
		// Anchors: both reservation checks of Service.Start (session/processes.go).
		mut("StartSkipsReservation", "refusal reasons",
			edit{"session/processes.go", "if err := s.AssertWritable(ctx, req.Workspace); err != nil {", "if err := s.AssertWritable(ctx, req.Workspace); false {"},
			edit{"session/processes.go", "if err := workspace.CheckWritable(tx, ws.ID, baton.Token{}, 0); err != nil {", "if err := workspace.CheckWritable(tx, ws.ID, baton.Token{}, 0); false {"}),
		// Anchor: the holder test of Service.CloseUnspawned (session/launch.go).
		mut("CloseUnspawnedOthers", "launch records", edit{"session/launch.go",
			"l.Holder != s.id || s.owns(l.ID)", "l.Holder == s.id || s.owns(l.ID)"}),
		// Anchor: the live set of tx.PutLaunch (store/badgerstore/records.go).
		badger(mut("BadgerLaunchStaysLive", "launch records", edit{"store/badgerstore/records.go",
			"\t\tfunc() error { return t.moveMember(liveLaunches, cur.member(), v.member()) },\n",
			"\t\tfunc() error {\n\t\t\tif found {\n\t\t\t\treturn t.moveMember(liveLaunches, cur.member(), cur.member())\n\t\t\t}\n\t\t\treturn t.moveMember(liveLaunches, cur.member(), v.member())\n\t\t},\n"})),
		// Requests between a commit and its effect.
		// Anchor: the launch lock of supervisor.Launch (session/processes.go).
		mut("LaunchLockReleasedEarly", "between commit and effect", edit{"session/processes.go",
			"\tdefer sl.mu.Unlock()\n\terr = s.store.View(ctx, func(tx store.Tx) error {", "\tsl.mu.Unlock()\n\terr = s.store.View(ctx, func(tx store.Tx) error {"}),
		// Anchor: the readiness deadline of Coordinator.stepStart (handoff/driver.go).
		mut("ReadyDeadlineFromNow", "between commit and effect", edit{"handoff/driver.go",
			"h.UpdatedAt.Add(c.readyTime)", "c.clock.Now().Add(c.readyTime)"}),
		// Anchor: the skip test of Service.reap (session/launch.go).
		mut("ReapSkipsUnadmitted", "between commit and effect", edit{"session/launch.go",
			"if s.owns(l.ID) || (keep != nil && keep(l.Holder)) {", "if s.owns(l.ID) || !l.Admitted || (keep != nil && keep(l.Holder)) {"}),
		// Slow stops.
		// Anchor: the stop timeout of Service.stopProc (session/processes.go).
		mut("StopTimeoutIgnored", "slow stops", edit{"session/processes.go",
			"sctx, cancel := clock.WithTimeout(ctx, s.clock, s.stopTime)", "sctx, cancel := clock.WithTimeout(ctx, s.clock, 1<<62)"}),
		// Anchor: the timed-out case of Service.stopProc (session/processes.go).
		mut("TimedOutStopConfirmed", "slow stops", edit{"session/processes.go",
			"\t\tout = engine.Timeout\n\t\tif context.Cause(sctx) == context.DeadlineExceeded {", "\t\tout = engine.Stopped\n\t\tif context.Cause(sctx) == context.DeadlineExceeded {"}),
		// Unconfirmed reaps inside Reconcile.
		// Anchor: the reap of Coordinator.reconcile (handoff/restart.go).
		mut("ReconcileReapErrorIgnored", "reaps", edit{"handoff/restart.go",
			"_, rerr = c.reapStrays(ctx, p.Workspace, engine.NotRunning, nil)", "_, _ = c.reapStrays(ctx, p.Workspace, engine.NotRunning, nil)"}),
		// Anchor: the reap of Coordinator.finishStop (handoff/stop.go).
		mut("StopSkipsStrays", "reaps", edit{"handoff/stop.go",
			"\tout, herr = c.reapStrays(ctx, h.Workspace, out, herr)\n", ""}),
		// Anchor: the held test of Coordinator.reconcile (handoff/restart.go).
		singleNode(mut("RecoverHeldIgnored", "reaps", edit{"handoff/restart.go",
			"return r.Workspace == p.Workspace }); i >= 0 {", "return r.Workspace == p.Workspace }); i > len(held) {"})),
		// The context-pressure policy (invariant 11).
		// Anchor: the stopped test of Service.endWith (session/processes.go).
		mut("PressureOnStoppedTurn", "context pressure", edit{"session/processes.go",
			"if !st.Stopped && s.pressure() != nil {", "if s.pressure() != nil {"}),
		// Anchor: the mark of Coordinator.pressureCheck (handoff/pressure.go).
		mut("PressureNotMarkedFired", "context pressure", edit{"handoff/pressure.go",
			"runs a turn again\", sid)\n\t\t}\n\t\ts.Pressure = store.PressureFired\n", "runs a turn again\", sid)\n\t\t}\n"}),
		// Anchor: the creation loop of Coordinator.createDue (handoff/pressure.go).
		mut("PressureDueNeverCreated", "context pressure", edit{"handoff/pressure.go",
			"\tfor _, d := range all {\n\t\tc.firePressure(ctx, d.ws, d.sid)\n\t}\n", "\t_ = all\n"}),
		// Anchor: the check of Coordinator.Create (handoff/request.go).
		mut("PressureDueOutlivesCallersTransfer", "context pressure", edit{"handoff/request.go",
			"h, f, err := c.apply(ctx, \"\", in, c.callerCheck(req, in.fp))\n\tif errors.Is", "h, f, err := c.apply(ctx, \"\", in, c.createCheck(req, in.fp))\n\tif errors.Is"}),
		// Anchor: the due check of CheckWritable (internal/workspace/reservation.go).
		mut("PressureDueWritable", "context pressure", edit{"internal/workspace/reservation.go",
			"\t\tif token.IsZero() {\n\t\t\treturn checkDue(tx, ws)\n\t\t}\n", ""}),
		// Anchor: the armed test of MarkPressure (internal/workspace/pressure.go).
		mut("PressureFiresAgain", "context pressure", edit{"internal/workspace/pressure.go",
			"if launch == \"\" || s.Pressure != store.PressureArmed {", "if launch == \"\" || s.Pressure == store.PressureDue {"}),
		// Anchor: the comparison of OverThreshold (internal/workspace/pressure.go).
		mut("PressureAboveOnly", "context pressure", edit{"internal/workspace/pressure.go",
			"float64(u.Tokens)/float64(u.Window) >= p.Threshold", "float64(u.Tokens)/float64(u.Window) > p.Threshold"}),
		// Anchor: the open set of tx.PutInstruction (store/badgerstore/records.go).
		badger(mut("BadgerOpenSetMissing", "instruction queue", edit{"store/badgerstore/records.go",
			"\t\tfunc() error { return t.moveMember(openInstructions, cur.member(), v.member()) },\n", "\t\tfunc() error { return nil },\n"})),
		// Anchor: the reservation as stored (store/internal/records/records.go).
		badger(mut("BadgerLeaseExpiryAsUpdate", "lease takeover", edit{"store/internal/records/records.go",
			"r.LeaseExpires, r.UpdatedAt = n(r.LeaseExpires), n(r.UpdatedAt)", "r.LeaseExpires, r.UpdatedAt = n(r.UpdatedAt), n(r.UpdatedAt)"})),
	}
}

// singleNode makes bug run the harness with one node (Recover is its
// restart).
func singleNode(bug plantedBug) plantedBug {
	bug.nodes = 1
	return bug
}

// badger makes bug run the harness on badgerstore.
func badger(bug plantedBug) plantedBug {
	bug.badger = true
	return bug
}

// plantedEnv names the mutation TestPlantedMutation catches in a build
// with that mutation applied.
const plantedEnv = "BATON_PLANTED"

// plantedLine is the line TestPlantedMutation prints for each catch.
var plantedLine = regexp.MustCompile(`(?m)^planted: \S+ caught after (\d+) sequences: (.*)$`)

// catchMutation builds the package's tests with bug's edits applied and
// runs TestPlantedMutation there, which runs the harness runs times; it
// returns the sequences each run took to catch the bug and the first line
// of each failure.
func catchMutation(t *testing.T, bug plantedBug, runs int) ([]int, []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root is not %s: %v", root, err)
	}
	dir := t.TempDir()
	replace := map[string]string{}
	for i, e := range bug.edits {
		path := filepath.Join(root, filepath.FromSlash(e.file))
		src := replace[path]
		if src == "" {
			src = path
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), e.old); n != 1 {
			t.Fatalf("%s: the code to mutate occurs %d times in %s, want once: the code changed, plant the bug again\n%s",
				bug.name, n, e.file, e.old)
		}
		mutated := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(path)))
		if err := os.WriteFile(mutated, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		replace[path] = mutated
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	// The build of its own runs as many sequences as this one would.
	checks := flag.Lookup("rapid.checks").Value.String()
	cmd := exec.CommandContext(ctx, goBin, "test", "-overlay", ovPath, "-count=1", "-v", "-run", "^TestPlantedMutation$", ".", "-rapid.checks="+checks)
	cmd.Env = append(os.Environ(), plantedEnv+"="+bug.name, "PLANTED_TABLE="+strconv.Itoa(runs))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the harness did not catch %s (%s, %s): go test with the mutation: %v\n%s", bug.name, bug.family, bug.how, err, out)
	}
	var ns []int
	var whys []string
	for _, m := range plantedLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		ns, whys = append(ns, n), append(whys, m[2])
	}
	if len(ns) != runs {
		t.Fatalf("%s: %d catches reported, want %d:\n%s", bug.name, len(ns), runs, out)
	}
	return ns, whys
}

// TestPlantedMutation is run by TestHarnessCatchesPlantedBugs in a build
// of this package with one mutation applied, named by BATON_PLANTED: it
// runs the harness against it (PLANTED_TABLE times, at least once) and
// fails unless every run catches it. It skips in any other run.
func TestPlantedMutation(t *testing.T) {
	name := os.Getenv(plantedEnv)
	if name == "" {
		t.Skip("run by TestHarnessCatchesPlantedBugs, in a build with the mutation " + plantedEnv + " names")
	}
	plantedFlags(t)
	var bug *plantedBug
	for _, b := range mutationBugs() {
		if b.name == name {
			bug = &b
		}
	}
	if bug == nil {
		t.Fatalf("no mutation %q", name)
	}
	runs, _ := strconv.Atoi(os.Getenv("PLANTED_TABLE"))
	for range max(runs, 1) {
		n, why := catch(t, *bug)
		if why == "" {
			t.Fatalf("the harness did not catch %s", name)
		}
		fmt.Printf("planted: %s caught after %d sequences: %s\n", name, n, why)
	}
}

// TestPlantedAnchorsApply checks, in every run, that each mutation's code
// still occurs exactly once where it is anchored, so that moving the code
// fails here at once rather than only in the long planted-bug run.
func TestPlantedAnchorsApply(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, bug := range mutationBugs() {
		srcs := map[string]string{}
		for _, e := range bug.edits {
			src, ok := srcs[e.file]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.file)))
				if err != nil {
					t.Errorf("%s: %v", bug.name, err)
					continue
				}
				src = string(b)
			}
			if n := strings.Count(src, e.old); n != 1 {
				t.Errorf("%s: the code to mutate occurs %d times in %s, want once: plant the bug again\n%s", bug.name, n, e.file, e.old)
				continue
			}
			srcs[e.file] = strings.Replace(src, e.old, e.new, 1)
		}
	}
}
