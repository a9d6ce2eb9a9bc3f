package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// BareTransition sends the statements of the benchmarked transition
// (bench_test.go) as a pgx batch of its own, with none of the Store's
// code around them: the floor of that transition in SQL. It is test code,
// for BenchmarkPGTransitionVsRaw.
type BareTransition struct {
	s      *Store
	ws     store.Workspace
	h      store.Handoff
	hv, rv int64 // the rows' versions, as the row cache would hold them
	seq    int64 // the workspace's last change Seq, as the row cache would hold it
}

// NewBareTransition reads the versions of handoff h and of ws's
// reservation.
func NewBareTransition(ctx context.Context, s *Store, ws store.Workspace, h baton.HandoffID) (*BareTransition, error) {
	b := &BareTransition{s: s, ws: ws}
	err := s.View(ctx, func(tx store.Tx) error {
		var err error
		if b.h, err = tx.GetHandoff(h); err != nil {
			return err
		}
		b.seq, err = tx.LastSeq(ws.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = s.pool.QueryRow(ctx, `SELECT (SELECT version FROM handoffs WHERE id = $1), (SELECT version FROM reservations WHERE workspace = $2)`,
		string(h), string(ws.ID)).Scan(&b.hv, &b.rv)
	return b, err
}

// Run makes the transition's writes as the Store makes them with its row
// cache warm, in one round trip, as the implicit transaction of the batch
// (the pool's connections are serializable by default): the gate, the
// check of the reservation read, the update of the columns of the handoff
// read that change (checked), the update of the workspace (not read, so
// not checked) and the change feed row (at the Seq after the last); again
// after a serialization failure.
func (b *BareTransition) Run(ctx context.Context) error {
	conn, err := b.s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	for {
		// A failed implicit transaction has ended with its batch.
		if err := b.run(ctx, conn); err == nil || !isConflict(err) {
			return err
		}
	}
}

func (b *BareTransition) run(ctx context.Context, conn *pgxpool.Conn) error {
	prev := b.h
	b.h.Attempt++
	b.h.Error = fmt.Sprint("epoch ", 1)
	b.ws.ActivationCounter = int64(b.h.Attempt)
	kinds, records := encodeFeed([]feedEntry{{key: recordKey{kindHandoff, string(b.h.ID)}, rec: b.h}})
	batch := &pgx.Batch{}
	batch.Queue(gateSharedSQL, b.s.gateKey)
	batch.Queue(checkSQL[kindReservation], string(b.ws.ID), b.rv)
	var hv int64 // the handoff's new version, once committed
	_, checked, args := handoffs.diff(prev, b.h)
	batch.Queue(checked, append(args, b.hv)...).QueryRow(func(r pgx.Row) error { return r.Scan(&hv) })
	batch.Queue(workspaces.updateSQL+workspaces.returning, workspaces.args(b.ws)...).QueryRow(func(r pgx.Row) error { var v int64; return r.Scan(&v) })
	batch.Queue(appendAtSQL, string(b.ws.ID), b.seq+1, kinds[0], records[0])
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		return err
	}
	b.hv = hv
	b.seq++
	return nil
}

// HandoffWriteColumns returns the number of columns, besides the key and
// the version, that PutHandoff's update of old to h sets (records.go,
// diff).
func HandoffWriteColumns(old, h store.Handoff) int {
	_, _, args := handoffs.diff(old, h)
	return len(args) - 1
}
