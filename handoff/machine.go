package handoff

import (
	"context"
	"fmt"
	"strings"

	"github.com/qmuntal/stateless"

	"github.com/batonhq/baton/store"
)

// machineTrigger is an event of the transfer machine, as Event.Trigger and
// MachineGraph name it: Create, SourceStopped, SourceStopUnconfirmed, SubmitReport,
// ReportRefused, GenerationEnded, GenerationTimedOut, TargetReady,
// TargetFailed, TargetExited (engine triggers: they carry the attempt they
// belong to and are refused for any other attempt or after a stop was
// requested), Retry, Skip, Cancel, CancelUnconfirmed, Shutdown and
// Reconcile.
type machineTrigger string

// The triggers of the transfer machine.
const (
	triggerCreate                = machineTrigger("Create")
	triggerSourceStopped         = machineTrigger("SourceStopped")
	triggerSourceStopUnconfirmed = machineTrigger("SourceStopUnconfirmed")
	triggerSubmitReport          = machineTrigger("SubmitReport")
	triggerReportRefused         = machineTrigger("ReportRefused")
	triggerGenerationEnded       = machineTrigger("GenerationEnded")
	triggerGenerationTimedOut    = machineTrigger("GenerationTimedOut")
	triggerTargetReady           = machineTrigger("TargetReady")
	triggerTargetFailed          = machineTrigger("TargetFailed")
	triggerTargetExited          = machineTrigger("TargetExited")
	triggerRetry                 = machineTrigger("Retry")
	triggerSkip                  = machineTrigger("Skip")
	triggerCancel                = machineTrigger("Cancel")
	triggerCancelUnconfirmed     = machineTrigger("CancelUnconfirmed")
	triggerShutdown              = machineTrigger("Shutdown")
	triggerReconcile             = machineTrigger("Reconcile")
)

// stateNew is the machine's state of a request not yet inserted.
const stateNew = store.HandoffState("new")

var (
	active  = []store.HandoffState{store.StateStopping, store.StateGenerating, store.StateStarting}
	waiting = []store.HandoffState{store.StateFailed, store.StateInterrupted}
	pending = append(append([]store.HandoffState{}, active...), waiting...)
)

// edge is one row of the transition table. The machine and the Mermaid
// rendering are both built from edges, so the picture cannot drift from the
// code.
type edge struct {
	from    store.HandoffState
	trigger machineTrigger
	to      store.HandoffState // == from: re-entry; "" internal transition
	guard   stateless.GuardFunc
	label   string // guard's description for the picture
	// action is an internal transition's effect.
	action func(context.Context, ...any) error
}

func edges() []edge {
	var es []edge
	add := func(from store.HandoffState, t machineTrigger, to store.HandoffState, g stateless.GuardFunc, label string) {
		es = append(es, edge{from: from, trigger: t, to: to, guard: g, label: label})
	}
	add(stateNew, triggerCreate, store.StateStopping, nil, "")
	add(store.StateStopping, triggerSourceStopped, store.StateGenerating, wantsReport, "summary wanted, source resumable")
	add(store.StateStopping, triggerSourceStopped, store.StateFailed, reportImpossible, "summary wanted, source not resumable")
	add(store.StateStopping, triggerSourceStopped, store.StateStarting, targetReady, "no summary wanted, or report stored")
	add(store.StateStopping, triggerSourceStopUnconfirmed, store.StateFailed, nil, "")
	es = append(es,
		edge{from: store.StateGenerating, trigger: triggerSubmitReport, label: "token of this attempt, valid text", action: storeReport},
		edge{from: store.StateGenerating, trigger: triggerReportRefused, label: "token of this attempt, text refused", action: recordRefusal})
	add(store.StateGenerating, triggerGenerationEnded, store.StateStarting, cleanWithReport, "clean exit, report stored")
	add(store.StateGenerating, triggerGenerationEnded, store.StateFailed, notCleanWithReport, "no report or error exit")
	add(store.StateGenerating, triggerGenerationTimedOut, store.StateStarting, stoppedWithReport, "stop confirmed, report stored")
	add(store.StateGenerating, triggerGenerationTimedOut, store.StateFailed, notStoppedWithReport, "otherwise")
	add(store.StateStarting, triggerTargetReady, store.StateCompleted, nil, "")
	add(store.StateStarting, triggerTargetFailed, store.StateFailed, nil, "")
	add(store.StateStarting, triggerTargetExited, store.StateCompleted, nil, "clean exit before ready")
	for _, s := range waiting {
		add(s, triggerRetry, store.StateStopping, noStopPending, "stop confirmed")
		add(s, triggerSkip, store.StateStopping, noStopPending, "stop confirmed")
	}
	for _, s := range pending {
		add(s, triggerCancel, store.StateCancelled, nil, "stop confirmed")
		add(s, triggerCancelUnconfirmed, store.StateFailed, nil, "stop not confirmed")
		add(s, triggerShutdown, store.StateInterrupted, nil, "")
		add(s, triggerReconcile, store.StateInterrupted, nil, "")
	}
	return es
}

// newMachine configures the transfer machine once. It keeps no state of its
// own: the state lives in the *fire carried by the context, so one machine
// serves every handoff and every goroutine (FiringImmediate).
func newMachine() *stateless.StateMachine {
	sm := stateless.NewStateMachineWithExternalStorage(accessState, mutateState, stateless.FiringImmediate)
	sm.OnUnhandledTrigger(unhandled)
	for _, e := range edges() {
		cfg := sm.Configure(e.from)
		var guards []stateless.GuardFunc
		if e.guard != nil {
			guards = append(guards, e.guard)
		}
		switch e.to {
		case "":
			cfg.InternalTransition(e.trigger, e.action, guards...)
		case e.from:
			cfg.PermitReentry(e.trigger, guards...)
		default:
			cfg.Permit(e.trigger, e.to, guards...)
		}
	}
	sm.Configure(store.StateStopping).OnEntryFrom(triggerCreate, beginCreate).
		OnEntryFrom(triggerRetry, beginRetry).OnEntryFrom(triggerSkip, beginSkip)
	sm.Configure(store.StateGenerating).OnEntry(enterGenerating)
	sm.Configure(store.StateStarting).OnEntry(enterStarting)
	sm.Configure(store.StateCompleted).OnEntry(enterCompleted)
	sm.Configure(store.StateFailed).OnEntry(enterFailed)
	sm.Configure(store.StateInterrupted).OnEntry(enterInterrupted).OnEntryFrom(triggerReconcile, retakeReservation)
	sm.Configure(store.StateCancelled).OnEntry(enterCancelled)
	return sm
}

func accessState(ctx context.Context) (stateless.State, error) {
	// ToGraph asks for a current state outside any firing.
	if f, ok := ctx.Value(fireKey{}).(*fire); ok && f.h.State != "" {
		return f.h.State, nil
	}
	return stateNew, nil
}

func mutateState(ctx context.Context, s stateless.State) error {
	fireOf(ctx).h.State = s.(store.HandoffState)
	return nil
}

func unhandled(_ context.Context, state stateless.State, trigger stateless.Trigger, unmet []string) error {
	return fmt.Errorf("%w: %v in state %v", errNotPermitted, trigger, state)
}

// Graph is the transfer machine as pictures: Graphviz DOT (rendered by
// stateless) and Mermaid (rendered from the same transition table).
type Graph struct {
	DOT     string
	Mermaid string
	// Edges is the transition table the pictures are drawn from, in table
	// order, for tools that draw the machine themselves.
	Edges []GraphEdge
}

// GraphEdge is one row of the transition table. To equals From for a
// transition that stays in its state (re-entry or internal).
type GraphEdge struct {
	From    store.HandoffState `json:"from"`
	Trigger string             `json:"trigger"`
	To      store.HandoffState `json:"to"`
	// Guard describes the condition under which the row applies; empty
	// when it always does.
	Guard string `json:"guard,omitempty"`
}

func graphEdges() []GraphEdge {
	var out []GraphEdge
	for _, e := range edges() {
		to := e.to
		if to == "" {
			to = e.from
		}
		out = append(out, GraphEdge{From: e.from, Trigger: string(e.trigger), To: to, Guard: e.label})
	}
	return out
}

// MachineGraph returns the transfer machine's graph: Graphviz DOT, Mermaid
// and its edges.
func MachineGraph() Graph {
	return Graph{DOT: newMachine().ToGraph(), Mermaid: mermaid(), Edges: graphEdges()}
}

func mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> stopping: Create\n")
	for _, e := range graphEdges() {
		if e.From == stateNew {
			continue
		}
		label := e.Trigger
		if e.Guard != "" {
			label += " [" + e.Guard + "]"
		}
		fmt.Fprintf(&b, "    %s --> %s: %s\n", e.From, e.To, label)
	}
	b.WriteString("    completed --> [*]\n    cancelled --> [*]\n")
	return b.String()
}

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
