package handoff

import (
	"context"
	"iter"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// supervisor is what the Coordinator needs of its session service beyond
// the service's public API: the table of processes both launch through,
// the reaping of earlier processes' launches and the records of ends.
// Package session hands it over through the workspace.Link its Service
// embeds, so neither package exports it.
type supervisor interface {
	// Launch starts an engine process in a workspace under the
	// workspace's rules (one process at most; the owner's fence checked
	// before the spawn and again after it).
	Launch(ctx context.Context, req workspace.LaunchRequest) (engine.Process, error)
	// Halt stops the workspace's process and records its end.
	Halt(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error)
	// HaltDeferred is Halt leaving the end to the caller's transaction.
	HaltDeferred(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, *workspace.End, error)
	// ExitEnd is the end of a process launched with KeepRecord.
	ExitEnd(launch baton.LaunchID, st engine.ExitStatus) *workspace.End
	// RecordEnd records the end of a session's process in a commit of its
	// own.
	RecordEnd(id baton.SessionID, launch baton.LaunchID, st engine.ExitStatus)
	// CloseUnspawned closes, inside tx, handoff h's launches the service
	// recorded but is not running.
	CloseUnspawned(tx store.Tx, ws baton.WorkspaceID, h baton.HandoffID) error
	// Reap confirms gone the live launches of earlier processes.
	Reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool) (workspace.ReapResult, error)
	// Reconcile reaps every earlier launch and ends the rows a crash left
	// running; it returns what it reaped and how many rows it ended.
	Reconcile(ctx context.Context) (workspace.ReapResult, int, error)
	// Conversation is a session's conversation, for a briefing.
	Conversation(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], string, error)
	// InstanceID and Host are what the service writes in launch records.
	InstanceID() string
	Host() string
	// Store is the store the service writes to.
	Store() store.Store
	// Clock, Logger and BaseID are the service's options
	// (BaseID its instance id without the suffix of its own): a
	// Coordinator sharing the service uses them.
	Clock() clock.Clock
	Logger() *zap.Logger
	BaseID() string
	// Close closes the service.
	Close(ctx context.Context) error
}
