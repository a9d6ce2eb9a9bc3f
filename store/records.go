package store

import (
	"time"

	"github.com/batonhq/baton"
)

// Workspace is the unit with one writer at a time.
type Workspace struct {
	ID      baton.WorkspaceID
	Name    string
	Mission string
	// Root is the directory handoff documents are published under (may be
	// empty: then no document is written).
	Root string
	// Config is the configuration the next ordinary start uses.
	Config baton.EngineConfig
	// CurrentSession is the session selected by the current-session rule,
	// kept up to date by package session so that reading it costs no scan.
	CurrentSession baton.SessionID
	// ActivationCounter is the highest activation order ever given in this
	// workspace; the next activation is ActivationCounter+1.
	ActivationCounter int64
	// Running lists the sessions of the workspace the current-session rule
	// may select (ActivationOrder >= 0) whose Status is running, in no
	// particular order; RankHead is the first session of the ranking list
	// (see Session.RankBelow), the session the rule selects when none
	// runs. Both are kept by package session, so that an end or a
	// rollback finds the next current session without a scan.
	Running  []baton.SessionID
	RankHead baton.SessionID
	// Ranked says that Running, RankHead and the sessions' rank links are
	// kept. A workspace written by a release that did not keep them reads
	// as false; package session derives them on its first write there, or
	// for a long history in its Service.Reconcile.
	Ranked    bool
	Archived  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SessionStatus is a session's lifecycle state.
type SessionStatus string

const (
	SessionIdle    SessionStatus = "idle"    // created, never started
	SessionRunning SessionStatus = "running" // an engine process runs it
	SessionEnded   SessionStatus = "ended"   // its process is gone; may be resumed
)

// Session is one native conversation with an engine.
type Session struct {
	ID        baton.SessionID
	Workspace baton.WorkspaceID
	Config    baton.EngineConfig
	// NativeID is the engine's own session id; empty when the engine never
	// minted one (killed before it confirmed readiness).
	NativeID string
	Status   SessionStatus
	// ActivationOrder: >0 activated (highest is current), 0 written before
	// ordering existed (legacy timestamp fallback), -1 rolled back.
	ActivationOrder int64
	StartedAt       time.Time // zero until first started
	EndedAt         time.Time // zero while never ended
	EndReason       string
	CreatedAt       time.Time
	// Seq orders sessions of a workspace by creation; set by the store on
	// insert (ListSessions returns ascending Seq).
	Seq int64
	// RankAbove and RankBelow link the sessions of a workspace that the
	// current-session rule may select (ActivationOrder >= 0) into its
	// ranking list, most current first by the rule's order without the
	// running-first step (Workspace.RankHead is the first); both are
	// empty for a session outside the list. Kept by package session.
	RankAbove baton.SessionID
	RankBelow baton.SessionID
}

// HandoffState is a state of the session-transfer machine.
type HandoffState string

const (
	StateStopping    HandoffState = "stopping"
	StateGenerating  HandoffState = "generating"
	StateStarting    HandoffState = "starting"
	StateCompleted   HandoffState = "completed"
	StateFailed      HandoffState = "failed"
	StateInterrupted HandoffState = "interrupted"
	StateCancelled   HandoffState = "cancelled"
)

// Terminal reports whether s never changes again.
func (s HandoffState) Terminal() bool { return s == StateCompleted || s == StateCancelled }

// Pending reports whether s holds the workspace's pending slot.
func (s HandoffState) Pending() bool { return s != "" && !s.Terminal() }

// AttemptRecord says how one attempt of a handoff ended.
type AttemptRecord struct {
	Attempt       int
	TargetSession baton.SessionID
	Outcome       HandoffState // the state the attempt left the handoff in
	Error         string
	EndedAt       time.Time
}

// Handoff is one session-transfer request.
type Handoff struct {
	ID          baton.HandoffID
	Workspace   baton.WorkspaceID
	RequestID   string
	Fingerprint string
	State       HandoffState
	Attempt     int
	// SourceSession may be empty (a workspace with no conversation yet).
	SourceSession   baton.SessionID
	TargetSession   baton.SessionID
	SourceConfig    baton.EngineConfig
	TargetConfig    baton.EngineConfig
	GenerateSummary bool
	// Native asks for the native path: the target is the source's own
	// native session resumed under the target configuration (an engine that
	// is an engine.Reconfigurer); no report is generated.
	Native     bool
	Report     string
	ReportPath string
	// Facts are the mechanical facts gathered beside the report (git state,
	// checks run), rendered as Markdown; empty when none were gathered.
	Facts string
	// GenerationToken is the hash of the current report-only turn's token;
	// zero outside generating.
	GenerationToken baton.TokenHash
	// GenerationDeadline is when the report-only turn times out.
	GenerationDeadline time.Time
	Error              string
	// StopRequested is set by Stop/cancel before it asks the engine to stop:
	// from then on no engine callback of the attempt is applied. The
	// process that drives the transfer carries the request out and clears
	// it when it settles the handoff (cancelled, or failed with its stop
	// unconfirmed).
	StopRequested bool
	// StopUnconfirmed is set when a stop ended without a confirmed outcome: a
	// process may still run, so retry and skip are refused until a Stop is
	// confirmed.
	StopUnconfirmed bool
	History         []AttemptRecord
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Reservation is a workspace's lifecycle lock. The row outlives releases so
// that Epoch only ever grows.
type Reservation struct {
	Workspace baton.WorkspaceID
	Held      bool
	Handoff   baton.HandoffID
	// Owner is the hash of the owner token; launches must present the token.
	Owner baton.TokenHash
	// Epoch grows by one on every take; a write under an older epoch is
	// refused (fencing).
	Epoch int64
	// LeaseHolder and LeaseExpires name the coordinator process driving the
	// pending handoff and until when (renewable runtime lease).
	LeaseHolder  string
	LeaseExpires time.Time
	// LeaseStore is the Incarnation of the Exclusive store the holder wrote
	// the lease through; empty on a shared store. A lease written under an
	// earlier incarnation of an exclusive store belongs to a dead process.
	LeaseStore string
	UpdatedAt  time.Time
}

// WakeupStatus is a wakeup's state.
type WakeupStatus string

const (
	WakeupPending   WakeupStatus = "pending"
	WakeupFired     WakeupStatus = "fired"
	WakeupCancelled WakeupStatus = "cancelled"
)

// Wakeup is a prompt to deliver at a deadline, optionally pinned to a session.
type Wakeup struct {
	ID        baton.WakeupID
	Workspace baton.WorkspaceID
	// Session is the pinned session; empty means "whichever is current".
	Session baton.SessionID
	Prompt  string
	At      time.Time
	Status  WakeupStatus
	// Reason says why a wakeup was cancelled (for example, refused at fire
	// time because nothing could be resumed); empty otherwise.
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ContinuationState is a queued continuation's state.
type ContinuationState string

const (
	ContinuationQueued    ContinuationState = "queued"
	ContinuationStarted   ContinuationState = "started"
	ContinuationRefused   ContinuationState = "refused"
	ContinuationCancelled ContinuationState = "cancelled"
)

// Continuation is a continuation of a run, queued durably with everything its
// briefing needs, so that a restart briefs the agent exactly as the original
// process would have.
type Continuation struct {
	ID        baton.ContinuationID
	Workspace baton.WorkspaceID
	// Session is the session being continued (may be empty).
	Session baton.SessionID
	// Task is the run's original task.
	Task string
	// Ending says how the previous attempt ended; kept even after the run's
	// own error is cleared on queueing.
	Ending string
	// Prompt is the user's new message, delivered after the briefing.
	Prompt string
	Target baton.EngineConfig
	// Automated marks a continuation triggered without a user (timer,
	// wakeup, restart recovery): it may only resume.
	Automated bool
	State     ContinuationState
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// LaunchState says whether a launch's processes may still run.
type LaunchState string

const (
	// LaunchLive: recorded before the spawn; its processes may run.
	LaunchLive LaunchState = "live"
	// LaunchGone: every process of the launch is confirmed gone.
	LaunchGone LaunchState = "gone"
)

// Launch is one engine launch, recorded in the transaction that commits
// before the spawn, so that after a crash the processes of every launch
// that may still run can be found (engine.Reaper) and confirmed gone
// before the workspace is released.
type Launch struct {
	ID        baton.LaunchID
	Workspace baton.WorkspaceID
	Session   baton.SessionID
	// Handoff and Attempt name the transfer attempt the launch belongs to;
	// empty and 0 for an ordinary session.
	Handoff baton.HandoffID
	Attempt int
	// Holder is the coordinator or session service instance that spawned it.
	Holder string
	// Host names the machine it was spawned on: only a Reaper on that
	// machine can find its processes and confirm them gone.
	Host string
	// Engine is the engine name the launch went to (the Reaper to ask).
	Engine string
	// Epoch is the reservation epoch the launch was made under (0 outside a
	// transfer).
	Epoch int64
	State LaunchState
	// Admitted is set, after the spawn and before the agent runs, by the
	// transaction of a two-phase start (engine.StartRequest.Admit) that
	// found the launch still fenced in: still live and its reservation
	// epoch and owner current. A reap that found no process of a launch
	// not yet admitted marks it gone in its transaction, after which it is
	// never admitted: of the reap and the admission, the first to commit
	// wins. False for a launch started without admission.
	Admitted  bool
	EndReason string
	CreatedAt time.Time
	UpdatedAt time.Time
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
	ID        baton.InstructionID
	Workspace baton.WorkspaceID
	Text      string
	State     InstructionState
	// Session is the session it was delivered to (empty while pending).
	Session   baton.SessionID
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ChangeKind says which kind of record a Change carries.
type ChangeKind string

const (
	ChangeHandoff     ChangeKind = "handoff"
	ChangeSession     ChangeKind = "session"
	ChangeInstruction ChangeKind = "instruction"
)

// Change is one entry of a workspace's change feed: a handoff, session or
// instruction as a committed transaction left it. Seq numbers a workspace's
// changes from 1, strictly increasing in commit order, durable like the
// records. A transaction that writes a record several times leaves one
// change for it, with its last value.
type Change struct {
	Workspace   baton.WorkspaceID
	Seq         int64
	Kind        ChangeKind
	Handoff     *Handoff     // Kind == ChangeHandoff
	Session     *Session     // Kind == ChangeSession
	Instruction *Instruction // Kind == ChangeInstruction
}
