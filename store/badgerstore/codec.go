package badgerstore

import (
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// Records are stored as JSON of the structs below, not of the store types.
// The on-disk names are spelled out here, so renaming a Go field in package
// store cannot silently orphan stored data; JSON decodes fields it does not
// know and leaves missing ones zero, so a field added later reads as zero
// from old records; and a directory stays readable with any JSON tool.
// Times are RFC 3339 with nanoseconds in UTC (finer than the microsecond
// the contract asks), omitted when zero; token hashes are hex.

type workspaceV1 struct {
	ID                baton.WorkspaceID  `json:"id"`
	Name              string             `json:"name,omitempty"`
	Mission           string             `json:"mission,omitempty"`
	Root              string             `json:"root,omitempty"`
	Config            baton.EngineConfig `json:"config,omitzero"`
	CurrentSession    baton.SessionID    `json:"currentSession,omitempty"`
	ActivationCounter int64              `json:"activationCounter,omitempty"`
	Running           []baton.SessionID  `json:"running,omitempty"`
	RankHead          baton.SessionID    `json:"rankHead,omitempty"`
	Ranked            bool               `json:"ranked,omitempty"`
	Archived          bool               `json:"archived,omitempty"`
	CreatedAt         time.Time          `json:"createdAt,omitzero"`
	UpdatedAt         time.Time          `json:"updatedAt,omitzero"`
}

func toWorkspace(w store.Workspace) workspaceV1 {
	return workspaceV1{w.ID, w.Name, w.Mission, w.Root, w.Config, w.CurrentSession,
		w.ActivationCounter, cloneIDs(w.Running), w.RankHead, w.Ranked, w.Archived, utc(w.CreatedAt), utc(w.UpdatedAt)}
}

// cloneIDs copies ids (nil when empty, as JSON decodes an omitted list):
// a stored form shares no slice with the record it was made from or is
// turned into (see recordCache).
func cloneIDs(ids []baton.SessionID) []baton.SessionID {
	if len(ids) == 0 {
		return nil
	}
	return slices.Clone(ids)
}

func (w workspaceV1) record() store.Workspace {
	return store.Workspace{ID: w.ID, Name: w.Name, Mission: w.Mission, Root: w.Root, Config: w.Config,
		CurrentSession: w.CurrentSession, ActivationCounter: w.ActivationCounter, Running: cloneIDs(w.Running),
		RankHead: w.RankHead, Ranked: w.Ranked, Archived: w.Archived,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
}

type sessionV1 struct {
	ID              baton.SessionID     `json:"id"`
	Workspace       baton.WorkspaceID   `json:"workspace"`
	Config          baton.EngineConfig  `json:"config,omitzero"`
	NativeID        string              `json:"nativeId,omitempty"`
	Status          store.SessionStatus `json:"status,omitempty"`
	ActivationOrder int64               `json:"activationOrder,omitempty"`
	StartedAt       time.Time           `json:"startedAt,omitzero"`
	EndedAt         time.Time           `json:"endedAt,omitzero"`
	EndReason       string              `json:"endReason,omitempty"`
	CreatedAt       time.Time           `json:"createdAt,omitzero"`
	Seq             int64               `json:"seq"`
	RankAbove       baton.SessionID     `json:"rankAbove,omitempty"`
	RankBelow       baton.SessionID     `json:"rankBelow,omitempty"`
}

func toSession(s store.Session) sessionV1 {
	return sessionV1{s.ID, s.Workspace, s.Config, s.NativeID, s.Status, s.ActivationOrder,
		utc(s.StartedAt), utc(s.EndedAt), s.EndReason, utc(s.CreatedAt), s.Seq, s.RankAbove, s.RankBelow}
}

func (s sessionV1) record() store.Session {
	return store.Session{ID: s.ID, Workspace: s.Workspace, Config: s.Config, NativeID: s.NativeID,
		Status: s.Status, ActivationOrder: s.ActivationOrder, StartedAt: s.StartedAt, EndedAt: s.EndedAt,
		EndReason: s.EndReason, CreatedAt: s.CreatedAt, Seq: s.Seq, RankAbove: s.RankAbove, RankBelow: s.RankBelow}
}

type attemptV1 struct {
	Attempt       int                `json:"attempt,omitempty"`
	TargetSession baton.SessionID    `json:"targetSession,omitempty"`
	Outcome       store.HandoffState `json:"outcome,omitempty"`
	Error         string             `json:"error,omitempty"`
	EndedAt       time.Time          `json:"endedAt,omitzero"`
}

type handoffV1 struct {
	ID                 baton.HandoffID    `json:"id"`
	Workspace          baton.WorkspaceID  `json:"workspace"`
	RequestID          string             `json:"requestId"`
	Fingerprint        string             `json:"fingerprint,omitempty"`
	State              store.HandoffState `json:"state,omitempty"`
	Attempt            int                `json:"attempt,omitempty"`
	SourceSession      baton.SessionID    `json:"sourceSession,omitempty"`
	TargetSession      baton.SessionID    `json:"targetSession,omitempty"`
	SourceConfig       baton.EngineConfig `json:"sourceConfig,omitzero"`
	TargetConfig       baton.EngineConfig `json:"targetConfig,omitzero"`
	GenerateSummary    bool               `json:"generateSummary,omitempty"`
	Native             bool               `json:"native,omitempty"`
	Report             string             `json:"report,omitempty"`
	ReportPath         string             `json:"reportPath,omitempty"`
	Facts              string             `json:"facts,omitempty"`
	GenerationToken    hexHash            `json:"generationToken,omitzero"`
	GenerationDeadline time.Time          `json:"generationDeadline,omitzero"`
	Error              string             `json:"error,omitempty"`
	StopRequested      bool               `json:"stopRequested,omitempty"`
	StopUnconfirmed    bool               `json:"stopUnconfirmed,omitempty"`
	History            []attemptV1        `json:"history,omitempty"`
	CreatedAt          time.Time          `json:"createdAt,omitzero"`
	UpdatedAt          time.Time          `json:"updatedAt,omitzero"`
	// Seq is the insert number of the handoff in its workspace (the order
	// of ListHandoffs); not part of store.Handoff.
	Seq uint64 `json:"seq"`
}

func toHandoff(h store.Handoff, seq uint64) handoffV1 {
	var hist []attemptV1
	if len(h.History) > 0 {
		hist = make([]attemptV1, len(h.History))
		for i, a := range h.History {
			hist[i] = attemptV1{a.Attempt, a.TargetSession, a.Outcome, a.Error, utc(a.EndedAt)}
		}
	}
	return handoffV1{h.ID, h.Workspace, h.RequestID, h.Fingerprint, h.State, h.Attempt,
		h.SourceSession, h.TargetSession, h.SourceConfig, h.TargetConfig, h.GenerateSummary, h.Native,
		h.Report, h.ReportPath, h.Facts, hexHash(h.GenerationToken), utc(h.GenerationDeadline), h.Error,
		h.StopRequested, h.StopUnconfirmed, hist, utc(h.CreatedAt), utc(h.UpdatedAt), seq}
}

func (h handoffV1) record() store.Handoff {
	var hist []store.AttemptRecord
	if len(h.History) > 0 {
		hist = make([]store.AttemptRecord, len(h.History))
		for i, a := range h.History {
			hist[i] = store.AttemptRecord{Attempt: a.Attempt, TargetSession: a.TargetSession,
				Outcome: a.Outcome, Error: a.Error, EndedAt: a.EndedAt}
		}
	}
	return store.Handoff{ID: h.ID, Workspace: h.Workspace, RequestID: h.RequestID,
		Fingerprint: h.Fingerprint, State: h.State, Attempt: h.Attempt, SourceSession: h.SourceSession,
		TargetSession: h.TargetSession, SourceConfig: h.SourceConfig, TargetConfig: h.TargetConfig,
		GenerateSummary: h.GenerateSummary, Native: h.Native, Report: h.Report, ReportPath: h.ReportPath, Facts: h.Facts,
		GenerationToken: baton.TokenHash(h.GenerationToken), GenerationDeadline: h.GenerationDeadline,
		Error: h.Error, StopRequested: h.StopRequested, StopUnconfirmed: h.StopUnconfirmed,
		History: hist, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt}
}

type reservationV1 struct {
	Workspace    baton.WorkspaceID `json:"workspace"`
	Held         bool              `json:"held,omitempty"`
	Handoff      baton.HandoffID   `json:"handoff,omitempty"`
	Owner        hexHash           `json:"owner,omitzero"`
	Epoch        int64             `json:"epoch,omitempty"`
	LeaseHolder  string            `json:"leaseHolder,omitempty"`
	LeaseExpires time.Time         `json:"leaseExpires,omitzero"`
	LeaseStore   string            `json:"leaseStore,omitempty"`
	UpdatedAt    time.Time         `json:"updatedAt,omitzero"`
}

func toReservation(r store.Reservation) reservationV1 {
	return reservationV1{r.Workspace, r.Held, r.Handoff, hexHash(r.Owner), r.Epoch, r.LeaseHolder,
		utc(r.LeaseExpires), r.LeaseStore, utc(r.UpdatedAt)}
}

func (r reservationV1) record() store.Reservation {
	return store.Reservation{Workspace: r.Workspace, Held: r.Held, Handoff: r.Handoff,
		Owner: baton.TokenHash(r.Owner), Epoch: r.Epoch, LeaseHolder: r.LeaseHolder,
		LeaseExpires: r.LeaseExpires, LeaseStore: r.LeaseStore, UpdatedAt: r.UpdatedAt}
}

type wakeupV1 struct {
	ID        baton.WakeupID     `json:"id"`
	Workspace baton.WorkspaceID  `json:"workspace"`
	Session   baton.SessionID    `json:"session,omitempty"`
	Prompt    string             `json:"prompt,omitempty"`
	At        time.Time          `json:"at,omitzero"`
	Status    store.WakeupStatus `json:"status,omitempty"`
	Reason    string             `json:"reason,omitempty"`
	CreatedAt time.Time          `json:"createdAt,omitzero"`
	UpdatedAt time.Time          `json:"updatedAt,omitzero"`
}

func toWakeup(w store.Wakeup) wakeupV1 {
	return wakeupV1{w.ID, w.Workspace, w.Session, w.Prompt, utc(w.At), w.Status, w.Reason,
		utc(w.CreatedAt), utc(w.UpdatedAt)}
}

func (w wakeupV1) record() store.Wakeup {
	return store.Wakeup{ID: w.ID, Workspace: w.Workspace, Session: w.Session, Prompt: w.Prompt,
		At: w.At, Status: w.Status, Reason: w.Reason, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
}

type continuationV1 struct {
	ID        baton.ContinuationID    `json:"id"`
	Workspace baton.WorkspaceID       `json:"workspace"`
	Session   baton.SessionID         `json:"session,omitempty"`
	Task      string                  `json:"task,omitempty"`
	Ending    string                  `json:"ending,omitempty"`
	Prompt    string                  `json:"prompt,omitempty"`
	Target    baton.EngineConfig      `json:"target,omitzero"`
	Automated bool                    `json:"automated,omitempty"`
	State     store.ContinuationState `json:"state,omitempty"`
	Reason    string                  `json:"reason,omitempty"`
	CreatedAt time.Time               `json:"createdAt,omitzero"`
	UpdatedAt time.Time               `json:"updatedAt,omitzero"`
	// Seq is the insert number in the workspace (ListContinuations order).
	Seq uint64 `json:"seq"`
}

func toContinuation(c store.Continuation, seq uint64) continuationV1 {
	return continuationV1{c.ID, c.Workspace, c.Session, c.Task, c.Ending, c.Prompt, c.Target,
		c.Automated, c.State, c.Reason, utc(c.CreatedAt), utc(c.UpdatedAt), seq}
}

func (c continuationV1) record() store.Continuation {
	return store.Continuation{ID: c.ID, Workspace: c.Workspace, Session: c.Session, Task: c.Task,
		Ending: c.Ending, Prompt: c.Prompt, Target: c.Target, Automated: c.Automated, State: c.State,
		Reason: c.Reason, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

type launchV1 struct {
	ID        baton.LaunchID    `json:"id"`
	Workspace baton.WorkspaceID `json:"workspace"`
	Session   baton.SessionID   `json:"session,omitempty"`
	Handoff   baton.HandoffID   `json:"handoff,omitempty"`
	Attempt   int               `json:"attempt,omitempty"`
	Holder    string            `json:"holder,omitempty"`
	Host      string            `json:"host,omitempty"`
	Engine    string            `json:"engine,omitempty"`
	Epoch     int64             `json:"epoch,omitempty"`
	State     store.LaunchState `json:"state,omitempty"`
	Admitted  bool              `json:"admitted,omitempty"`
	EndReason string            `json:"endReason,omitempty"`
	CreatedAt time.Time         `json:"createdAt,omitzero"`
	UpdatedAt time.Time         `json:"updatedAt,omitzero"`
	// Seq is the insert number in the workspace (LiveLaunches order).
	Seq uint64 `json:"seq"`
}

func toLaunch(l store.Launch, seq uint64) launchV1 {
	return launchV1{l.ID, l.Workspace, l.Session, l.Handoff, l.Attempt, l.Holder, l.Host, l.Engine, l.Epoch,
		l.State, l.Admitted, l.EndReason, utc(l.CreatedAt), utc(l.UpdatedAt), seq}
}

func (l launchV1) record() store.Launch {
	return store.Launch{ID: l.ID, Workspace: l.Workspace, Session: l.Session, Handoff: l.Handoff,
		Attempt: l.Attempt, Holder: l.Holder, Host: l.Host, Engine: l.Engine, Epoch: l.Epoch, State: l.State,
		Admitted: l.Admitted, EndReason: l.EndReason, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

type instructionV1 struct {
	ID        baton.InstructionID    `json:"id"`
	Workspace baton.WorkspaceID      `json:"workspace"`
	Text      string                 `json:"text,omitempty"`
	State     store.InstructionState `json:"state,omitempty"`
	Session   baton.SessionID        `json:"session,omitempty"`
	CreatedAt time.Time              `json:"createdAt,omitzero"`
	UpdatedAt time.Time              `json:"updatedAt,omitzero"`
	// Seq is the insert number in the workspace (ListInstructions order).
	Seq uint64 `json:"seq"`
}

func toInstruction(i store.Instruction, seq uint64) instructionV1 {
	return instructionV1{i.ID, i.Workspace, i.Text, i.State, i.Session, utc(i.CreatedAt), utc(i.UpdatedAt), seq}
}

func (i instructionV1) record() store.Instruction {
	return store.Instruction{ID: i.ID, Workspace: i.Workspace, Text: i.Text, State: i.State,
		Session: i.Session, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt}
}

// changeV1 is one entry of a workspace's change feed: the record as its
// transaction left it, in its own stored form.
type changeV1 struct {
	Workspace   baton.WorkspaceID `json:"workspace"`
	Seq         int64             `json:"seq"`
	Kind        store.ChangeKind  `json:"kind"`
	Handoff     *handoffV1        `json:"handoff,omitempty"`
	Session     *sessionV1        `json:"session,omitempty"`
	Instruction *instructionV1    `json:"instruction,omitempty"`
}

func (c changeV1) record() store.Change {
	out := store.Change{Workspace: c.Workspace, Seq: c.Seq, Kind: c.Kind}
	switch {
	case c.Handoff != nil:
		h := c.Handoff.record()
		out.Handoff = &h
	case c.Session != nil:
		s := c.Session.record()
		out.Session = &s
	case c.Instruction != nil:
		i := c.Instruction.record()
		out.Instruction = &i
	}
	return out
}

// utc drops the location and the monotonic reading; the zero time stays
// zero (IsZero), which omitzero then leaves out.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// hexHash is a baton.TokenHash that encodes as 64 hex digits.
type hexHash baton.TokenHash

func (h hexHash) IsZero() bool { return baton.TokenHash(h).IsZero() }

func (h hexHash) MarshalText() ([]byte, error) {
	return hex.AppendEncode(nil, h[:]), nil
}

func (h *hexHash) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(h) {
		return fmt.Errorf("badgerstore: token hash of %d hex digits, want %d", len(b), 2*len(h))
	}
	_, err := hex.Decode(h[:], b)
	return err
}
