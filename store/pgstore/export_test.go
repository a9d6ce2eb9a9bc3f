package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// DefaultMaxConns is the pool size when the Options and the connection
// string leave it unset.
const DefaultMaxConns = defaultMaxConns

// BareTransition sends the statements of the benchmarked transition
// (bench_test.go) as the Store sends them, in two pgx batches, with none
// of the Store's code around them: the floor of that transition in SQL.
// It is test code, for BenchmarkPGTransitionVsRaw.
type BareTransition struct {
	s  *Store
	ws store.Workspace
	id baton.HandoffID
}

// NewBareTransition returns the bare transition of handoff h of ws.
func NewBareTransition(ctx context.Context, s *Store, ws store.Workspace, h baton.HandoffID) (*BareTransition, error) {
	return &BareTransition{s: s, ws: ws, id: h}, nil
}

// Run makes the transition: BEGIN, the lock of the handoff's workspace,
// the read of the handoff and, ahead, of its workspace and reservation
// (each row scanned, as a pgx client would); then the update of the
// columns of the handoff that change, of the workspace, the change feed
// row and COMMIT.
func (b *BareTransition) Run(ctx context.Context) error {
	conn, err := b.s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	ahead := "(SELECT workspace FROM handoffs WHERE id = $1)"
	var h store.Handoff
	read := &pgx.Batch{}
	read.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	read.Queue(handoffs.lockSQL, string(b.id), b.s.seed)
	read.Queue(handoffs.getSQL, string(b.id)).QueryRow(func(r pgx.Row) (err error) { h, err = handoffs.scan(r); return err })
	read.Queue(workspaces.selectSQL+" WHERE id = "+ahead, string(b.id)).QueryRow(func(r pgx.Row) error { _, err := workspaces.scan(r); return err })
	read.Queue(reservations.selectSQL+" WHERE workspace = "+ahead, string(b.id)).QueryRow(func(r pgx.Row) error { _, err := reservations.scan(r); return err })
	if err := conn.SendBatch(ctx, read).Close(); err != nil {
		return err
	}
	prev := h
	h.Attempt++
	h.Error = fmt.Sprint("epoch ", 1)
	b.ws.ActivationCounter = int64(h.Attempt)
	kinds, records := encodeFeed([]feedEntry{{key: recordKey{kindHandoff, string(h.ID)}, rec: h}})
	write := &pgx.Batch{}
	sql, args := handoffs.diff(prev, h)
	write.Queue(sql, args...)
	write.Queue(workspaces.updateSQL, workspaces.args(b.ws)...)
	write.Queue(appendFeedSQL, string(b.ws.ID), kinds, records)
	write.Queue("COMMIT")
	if err := conn.SendBatch(ctx, write).Close(); err != nil {
		_, _ = conn.Exec(ctx, "ROLLBACK")
		return err
	}
	return nil
}

// HandoffWriteColumns returns the number of columns, besides the key and
// the version, that PutHandoff's update of old to h sets (records.go,
// diff).
func HandoffWriteColumns(old, h store.Handoff) int {
	_, args := handoffs.diff(old, h)
	return max(len(args)-1, 0)
}
