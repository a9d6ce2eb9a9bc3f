package store

import (
	"time"

	"github.com/batonhq/baton"
)

// Workspace is the unit with one writer at a time.
type Workspace struct {
	ID      baton.WorkspaceID `json:"id"`
	Name    string            `json:"name,omitempty"`
	Mission string            `json:"mission,omitempty"`
	// Root is the directory handoff documents are published under (may be
	// empty: then no document is written).
	Root string `json:"root,omitempty"`
	// Share says what a transfer's briefing carries to the target besides
	// the record: the conversation and the report (baton.ShareConversation,
	// also what blank means), the report only, or neither. A transfer
	// request may override it.
	Share baton.Share `json:"share,omitempty"`
	// Config is the configuration the next ordinary start uses.
	Config baton.EngineConfig `json:"config,omitzero"`
	// CurrentSession is the session selected by the current-session rule,
	// kept up to date by package session so that reading it costs no scan.
	CurrentSession baton.SessionID `json:"currentSessionId,omitempty"`
	// ActivationCounter is the highest activation order ever given in this
	// workspace; the next activation is ActivationCounter+1.
	ActivationCounter int64 `json:"activationCounter,omitempty"`
	// Running lists the sessions of the workspace the current-session rule
	// may select (ActivationOrder >= 0) whose Status is running, in no
	// particular order; RankHead is the first session of the ranking list
	// (see Session.RankBelow), the session the rule selects when none
	// runs. Both are kept by package session, so that an end or a
	// rollback finds the next current session without a scan.
	Running  []baton.SessionID `json:"running,omitempty"`
	RankHead baton.SessionID   `json:"rankHead,omitempty"`
	// Ranked says that Running, RankHead and the sessions' rank links are
	// kept. A workspace written by a release that did not keep them reads
	// as false; package session derives them on its first write there, or
	// for a long history in handoff.Coordinator.Recover.
	Ranked    bool      `json:"ranked,omitempty"`
	Archived  bool      `json:"archived,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// Pressure, when its Threshold is set, hands the workspace over to a
	// fresh session by itself once a turn of the current session settles
	// with its context window filled to the threshold (see package
	// handoff, "Context pressure").
	Pressure PressurePolicy `json:"pressure,omitzero"`
}

// PressurePolicy is a workspace's context-pressure policy: when a turn of
// the current session settles having reported a context usage of at least
// Threshold times its window, a transfer to a fresh session starts.
type PressurePolicy struct {
	// Threshold is the fraction of the context window, in (0, 1], at or
	// above which a settled turn hands over; 0 turns the policy off.
	Threshold float64 `json:"threshold,omitempty"`
	// Target is the fresh session's configuration; blank means the
	// source session's own.
	Target baton.EngineConfig `json:"target,omitzero"`
	// Report asks the source to write a report first (a report-only turn,
	// which needs room in the window the threshold leaves).
	Report bool `json:"report,omitempty"`
}

// PressureMark says where a workspace's context-pressure policy stands for
// one session.
type PressureMark string

const (
	// PressureArmed (blank): a settled turn over the threshold starts a
	// transfer.
	PressureArmed PressureMark = ""
	// PressureDue: a turn settled over the threshold, in the transaction
	// that recorded its end; the transfer is yet to be created (Recover and
	// Reconcile create what a crash left uncreated). Queued instructions
	// wait meanwhile.
	PressureDue PressureMark = "due"
	// PressureFired: a transfer was created for the session (or its
	// creation was refused): the policy is disarmed for the session until
	// the policy is set again.
	PressureFired PressureMark = "fired"
)

// SessionStatus is a session's lifecycle state.
type SessionStatus string

const (
	SessionIdle    SessionStatus = "idle"    // created, never started
	SessionRunning SessionStatus = "running" // an engine process runs it
	SessionEnded   SessionStatus = "ended"   // its process is gone; may be resumed
)

// Session is one native conversation with an engine.
type Session struct {
	ID        baton.SessionID    `json:"id"`
	Workspace baton.WorkspaceID  `json:"workspaceId"`
	Config    baton.EngineConfig `json:"config,omitzero"`
	// NativeID is the engine's own session id; empty when the engine never
	// minted one (killed before it confirmed readiness).
	NativeID string `json:"nativeId,omitempty"`
	// ActualModel is the model the engine reported its latest launch
	// really ran (engine.Actual), beside the configured Config.Model: an
	// agent CLI may send another model to its API than the one it was
	// asked for. EngineVersion is the engine's version as it reported it
	// (the agent CLI's). Both are empty when the engine reported nothing.
	ActualModel   string        `json:"actualModel,omitempty"`
	EngineVersion string        `json:"engineVersion,omitempty"`
	Status        SessionStatus `json:"status,omitempty"`
	// ActivationOrder: >0 activated (highest is current), 0 written before
	// ordering existed (legacy timestamp fallback), -1 rolled back.
	ActivationOrder int64     `json:"activationOrder,omitempty"`
	StartedAt       time.Time `json:"startedAt,omitzero"` // zero until first started
	EndedAt         time.Time `json:"endedAt,omitzero"`   // zero while never ended
	EndReason       string    `json:"endReason,omitempty"`
	CreatedAt       time.Time `json:"createdAt,omitzero"`
	// Seq orders sessions of a workspace by creation; set by the store on
	// insert (ListSessions returns ascending Seq).
	Seq int64 `json:"seq,omitempty"`
	// RankAbove and RankBelow link the sessions of a workspace that the
	// current-session rule may select (ActivationOrder >= 0) into its
	// ranking list, most current first by the rule's order without the
	// running-first step (Workspace.RankHead is the first); both are
	// empty for a session outside the list. Kept by package session.
	RankAbove baton.SessionID `json:"rankAbove,omitempty"`
	RankBelow baton.SessionID `json:"rankBelow,omitempty"`
	// Usage is how full the session's context window was after its
	// latest turn that reported it; the zero Usage when none did (an
	// engine that reports nothing leaves it zero). Package session writes
	// it in the transaction that records the turn's end.
	Usage Usage `json:"usage,omitzero"`
	// Pressure is where the workspace's context-pressure policy stands for
	// this session (PressurePolicy); kept by package handoff.
	Pressure PressureMark `json:"pressure,omitempty"`
}

// Usage is a session's context usage as its engine reported it after a
// turn (engine.Usage, which store does not import): the tokens in context
// as of the turn's last request to the model, the window's size (0 when
// unknown), and the launch whose turn reported it.
type Usage struct {
	Tokens int64 `json:"tokens,omitempty"`
	Window int64 `json:"window,omitempty"`
	// Launch is the launch (store.Launch.ID) whose turn reported the
	// usage: with the session, it names the turn.
	Launch baton.LaunchID `json:"launch,omitempty"`
}

// HandoffState is a state of the session-transfer machine.
type HandoffState string

const (
	StateStopping    HandoffState = "stopping"    // the source session is being stopped
	StateGenerating  HandoffState = "generating"  // the report-only turn runs
	StateStarting    HandoffState = "starting"    // the target session is being started
	StateCompleted   HandoffState = "completed"   // the target runs (terminal)
	StateFailed      HandoffState = "failed"      // an attempt failed; waits for a decision
	StateInterrupted HandoffState = "interrupted" // a process restart cut an attempt; waits for a decision
	StateCancelled   HandoffState = "cancelled"   // given up (terminal)
)

// Terminal reports whether s never changes again.
func (s HandoffState) Terminal() bool { return s == StateCompleted || s == StateCancelled }

// Pending reports whether s holds the workspace's pending slot.
func (s HandoffState) Pending() bool { return s != "" && !s.Terminal() }

// AttemptRecord says how one attempt of a handoff ended.
type AttemptRecord struct {
	Attempt       int             `json:"attempt"`
	TargetSession baton.SessionID `json:"targetSessionId,omitempty"`
	Outcome       HandoffState    `json:"outcome,omitempty"` // the state the attempt left the handoff in
	Error         string          `json:"error,omitempty"`
	EndedAt       time.Time       `json:"endedAt,omitzero"`
}

// Handoff is one session-transfer request.
type Handoff struct {
	ID          baton.HandoffID   `json:"id"`
	Workspace   baton.WorkspaceID `json:"workspaceId"`
	RequestID   string            `json:"requestId"`
	Fingerprint string            `json:"fingerprint,omitempty"`
	State       HandoffState      `json:"state,omitempty"`
	Attempt     int               `json:"attempt,omitempty"`
	// SourceSession may be empty (a workspace with no conversation yet).
	SourceSession   baton.SessionID    `json:"sourceSessionId,omitempty"`
	TargetSession   baton.SessionID    `json:"targetSessionId,omitempty"`
	SourceConfig    baton.EngineConfig `json:"sourceConfig,omitzero"`
	TargetConfig    baton.EngineConfig `json:"targetConfig,omitzero"`
	GenerateSummary bool               `json:"generateSummary,omitempty"`
	// Native asks for the native path: the target is the source's own
	// native session resumed under the target configuration (an engine that
	// is an engine.Reconfigurer); no report is generated.
	Native bool `json:"native,omitempty"`
	// Share is what the briefing of this transfer's target carries besides
	// the record (the request's choice, else the workspace's setting, as
	// the transfer was created); never blank once created by package
	// handoff.
	Share      baton.Share `json:"share,omitempty"`
	Report     string      `json:"report,omitempty"`
	ReportPath string      `json:"reportPath,omitempty"`
	// Facts are the mechanical facts gathered beside the report (git state,
	// checks run), rendered as Markdown; empty when none were gathered.
	Facts string `json:"facts,omitempty"`
	// GenerationToken is the hash of the current report-only turn's token;
	// zero outside generating.
	GenerationToken baton.TokenHash `json:"generationToken,omitzero"`
	// GenerationDeadline is when the report-only turn times out.
	GenerationDeadline time.Time `json:"generationDeadline,omitzero"`
	Error              string    `json:"error,omitempty"`
	// StopRequested is set by Stop/cancel before it asks the engine to stop:
	// from then on no engine callback of the attempt is applied. The
	// process that drives the transfer carries the request out and clears
	// it when it settles the handoff (cancelled, or failed with its stop
	// unconfirmed).
	StopRequested bool `json:"stopRequested,omitempty"`
	// StopUnconfirmed is set when a stop ended without a confirmed outcome: a
	// process may still run, so retry and skip are refused until a Stop is
	// confirmed.
	StopUnconfirmed bool            `json:"stopUnconfirmed,omitempty"`
	History         []AttemptRecord `json:"history,omitempty"`
	CreatedAt       time.Time       `json:"createdAt,omitzero"`
	UpdatedAt       time.Time       `json:"updatedAt,omitzero"`
	// Reason says why baton started the transfer by itself; the zero
	// Reason for one a caller asked for.
	Reason HandoffReason `json:"reason,omitzero"`
}

// TriggerContextPressure is the HandoffReason.Trigger of a transfer the
// workspace's context-pressure policy started (PressurePolicy).
const TriggerContextPressure = "context-pressure"

// HandoffReason is why baton started a transfer by itself: the trigger,
// and for TriggerContextPressure the usage that fired it and the
// threshold it crossed.
type HandoffReason struct {
	Trigger   string  `json:"trigger,omitempty"`
	Tokens    int64   `json:"tokens,omitempty"`
	Window    int64   `json:"window,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
}

// Reservation is a workspace's lifecycle lock. The row outlives releases so
// that Epoch only ever grows.
type Reservation struct {
	Workspace baton.WorkspaceID `json:"workspaceId"`
	Held      bool              `json:"held,omitempty"`
	Handoff   baton.HandoffID   `json:"handoffId,omitempty"`
	// Owner is the hash of the owner token; launches must present the token.
	Owner baton.TokenHash `json:"owner,omitzero"`
	// Epoch grows by one on every take; a write under an older epoch is
	// refused (fencing).
	Epoch int64 `json:"epoch,omitempty"`
	// LeaseHolder and LeaseExpires name the coordinator process driving the
	// pending handoff and until when (renewable runtime lease).
	LeaseHolder  string    `json:"leaseHolder,omitempty"`
	LeaseExpires time.Time `json:"leaseExpires,omitzero"`
	// LeaseStore is the incarnation of the exclusive store the holder wrote
	// the lease through (see the package doc); empty on a shared store. A
	// lease written under an earlier incarnation of an exclusive store
	// belongs to a dead process.
	LeaseStore string    `json:"leaseStore,omitempty"`
	UpdatedAt  time.Time `json:"updatedAt,omitzero"`
}

// WakeupStatus is a wakeup's state.
type WakeupStatus string

const (
	WakeupPending   WakeupStatus = "pending"   // waits for its deadline
	WakeupFired     WakeupStatus = "fired"     // delivered
	WakeupCancelled WakeupStatus = "cancelled" // withdrawn or refused (see Reason)
)

// Wakeup is a prompt to deliver at a deadline, optionally pinned to a session.
type Wakeup struct {
	ID        baton.WakeupID    `json:"id"`
	Workspace baton.WorkspaceID `json:"workspaceId"`
	// Session is the pinned session; empty means "whichever is current".
	Session baton.SessionID `json:"sessionId,omitempty"`
	Prompt  string          `json:"prompt,omitempty"`
	At      time.Time       `json:"at,omitzero"`
	Status  WakeupStatus    `json:"status,omitempty"`
	// Reason says why a wakeup was cancelled (for example, refused at fire
	// time because nothing could be resumed); empty otherwise.
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// ContinuationState is a queued continuation's state.
type ContinuationState string

const (
	ContinuationQueued    ContinuationState = "queued"    // waits to run
	ContinuationStarted   ContinuationState = "started"   // ran
	ContinuationRefused   ContinuationState = "refused"   // could not run (see Reason)
	ContinuationCancelled ContinuationState = "cancelled" // withdrawn
)

// Continuation is a continuation of a run, queued durably with everything its
// briefing needs, so that a restart briefs the agent exactly as the original
// process would have.
type Continuation struct {
	ID        baton.ContinuationID `json:"id"`
	Workspace baton.WorkspaceID    `json:"workspaceId"`
	// Session is the session being continued (may be empty).
	Session baton.SessionID `json:"sessionId,omitempty"`
	// Task is the run's original task.
	Task string `json:"task,omitempty"`
	// Ending says how the previous attempt ended; kept even after the run's
	// own error is cleared on queueing.
	Ending string `json:"ending,omitempty"`
	// Prompt is the user's new message, delivered after the briefing.
	Prompt string             `json:"prompt,omitempty"`
	Target baton.EngineConfig `json:"target,omitzero"`
	// Automated marks a continuation triggered without a user (timer,
	// wakeup, restart recovery): it may only resume.
	Automated bool              `json:"automated,omitempty"`
	State     ContinuationState `json:"state,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	CreatedAt time.Time         `json:"createdAt,omitzero"`
	UpdatedAt time.Time         `json:"updatedAt,omitzero"`
}

// Launch is one engine launch, recorded in the transaction that commits
// before the spawn, so that after a crash the processes of every launch
// that may still run can be found (engine.Reaper) and confirmed gone
// before the workspace is released.
type Launch struct {
	ID        baton.LaunchID    `json:"id"`
	Workspace baton.WorkspaceID `json:"workspaceId"`
	Session   baton.SessionID   `json:"sessionId,omitempty"`
	// Handoff and Attempt name the transfer attempt the launch belongs to;
	// empty and 0 for an ordinary session.
	Handoff baton.HandoffID `json:"handoffId,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	// Holder is the coordinator or session service instance that spawned it.
	Holder string `json:"holder,omitempty"`
	// Host names the machine it was spawned on: only a Reaper on that
	// machine can find its processes and confirm them gone.
	Host string `json:"host,omitempty"`
	// Engine is the engine name the launch went to (the Reaper to ask).
	Engine string `json:"engine,omitempty"`
	// Epoch is the reservation epoch the launch was made under (0 outside a
	// transfer).
	Epoch int64 `json:"epoch,omitempty"`
	// Gone is set once every process of the launch is confirmed gone.
	// Until then the launch is live: recorded before the spawn, its
	// processes may run (Tx.LiveLaunches).
	Gone bool `json:"gone,omitempty"`
	// Admitted is set, after the spawn and before the agent runs, by the
	// transaction of a two-phase start (engine.StartRequest.Admit) that
	// found the launch still fenced in: still live and its reservation
	// epoch and owner current. A reap that found no process of a launch
	// not yet admitted marks it gone in its transaction, after which it is
	// never admitted: of the reap and the admission, the first to commit
	// wins. False for a launch started without admission.
	Admitted  bool      `json:"admitted,omitempty"`
	EndReason string    `json:"endReason,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// InstructionState is a queued instruction's delivery state.
type InstructionState string

const (
	// InstructionPending: queued, not delivered yet.
	InstructionPending InstructionState = "pending"
	// InstructionDelivered: handed to the agent.
	InstructionDelivered InstructionState = "delivered"
	// InstructionUnknown: a delivery was attempted but not confirmed (the
	// process ended or a transfer cut in): never redelivered silently, only
	// by an explicit resend.
	InstructionUnknown InstructionState = "unknown"
	// InstructionCancelled: withdrawn by the user before delivery; kept
	// for history, never delivered.
	InstructionCancelled InstructionState = "cancelled"
)

// Open reports whether an instruction in state s may not have reached the
// agent yet: pending or unknown (Tx.OpenInstructions lists those).
func (s InstructionState) Open() bool {
	return s == InstructionPending || s == InstructionUnknown
}

// Instruction is a message sent to a workspace while its agent was busy,
// queued durably with its delivery state.
type Instruction struct {
	ID        baton.InstructionID `json:"id"`
	Workspace baton.WorkspaceID   `json:"workspaceId"`
	Text      string              `json:"text,omitempty"`
	State     InstructionState    `json:"state,omitempty"`
	// Session is the session it was delivered to (empty while pending).
	Session   baton.SessionID `json:"sessionId,omitempty"`
	CreatedAt time.Time       `json:"createdAt,omitzero"`
	UpdatedAt time.Time       `json:"updatedAt,omitzero"`
}

// Change is one entry of a workspace's change feed: a handoff, session or
// instruction as a committed transaction left it (exactly one of the three
// is set). Seq numbers a workspace's
// changes from 1, strictly increasing in commit order, durable like the
// records. A transaction that writes a record several times leaves one
// change for it, with its last value.
type Change struct {
	Workspace   baton.WorkspaceID `json:"workspaceId"`
	Seq         int64             `json:"seq"`
	Handoff     *Handoff          `json:"handoff,omitempty"`
	Session     *Session          `json:"session,omitempty"`
	Instruction *Instruction      `json:"instruction,omitempty"`
}
