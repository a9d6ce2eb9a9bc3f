package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// tx is a store.Tx on one pooled connection.
//
// Isolation (DESIGN.md says why it is enough): an Update is a READ
// COMMITTED transaction that takes the lock of a workspace (lockSQL)
// before its first statement that reads or writes a row of that
// workspace, and holds it until it ends; so the Updates of one workspace
// run one after another, each seeing what the one before it committed,
// and those of different workspaces never wait for each other. The
// cross-workspace lists take no lock.
//
// Round trips: BEGIN is not sent on its own but with the first statement,
// and writes whose outcome is already known, with the locks, are queued
// and go with the next statement that needs an answer or with the
// COMMIT, all in one pgx batch. The server runs a batch's statements in
// order and skips the rest of it after a failure, so a read still sees
// every earlier write of the transaction, and a COMMIT never follows a
// failed write.
//
// A write's outcome is known when it cannot fail: records are never
// deleted, so a Put of a record this transaction has read or written
// matches its row, and a PutHandoff that does not newly take the pending
// slot cannot break a uniqueness rule. Inserts, a Put of a record the
// transaction has not seen, and a PutHandoff that takes the slot are sent
// at once, and written so that a broken rule is an answer rather than an
// error (ON CONFLICT DO NOTHING, a NOT EXISTS guard): an error aborts a
// PostgreSQL transaction, and the contract lets fn go on after
// store.ErrDuplicate.
type tx struct {
	ctx    context.Context
	conn   *pgxpool.Conn
	seed   int64 // the schema's seed of the workspace locks' keys
	update bool
	begun  bool // BEGIN has been sent
	done   bool

	queued []queuedWrite
	// err is the first failed statement: the server has aborted the
	// transaction, so every later call returns it and the Update does not
	// commit. conflict says it is worth a retry (a deadlock).
	err      error
	conflict bool

	// locked holds the workspaces whose lock the transaction holds, or
	// has queued (it is taken before any later statement runs).
	locked map[baton.WorkspaceID]bool
	// seen holds the records known to exist (read or written here), by
	// kind and id; cache the rows a transition reads most (cache.go).
	seen  map[recordKey]struct{}
	cache cache
	// feed holds the records to append to the change feeds at commit
	// (their last values), in the order first written; commit lists
	// their workspaces in changed, in the same order. sessionSeqs are
	// the Seqs of the sessions seen, which a session's change carries.
	feed        backend.Changes[recordKey, feedEntry]
	changed     []baton.WorkspaceID
	sessionSeqs map[baton.SessionID]int64
}

var _ store.Tx = (*tx)(nil)

// recordKey names one record: its table and id.
type recordKey struct {
	kind string
	id   string
}

type queuedWrite struct {
	sql  string
	args []any
	lock bool // a lock: no row count to check
}

// lockSQL takes the lock of workspace $1 for the rest of the transaction:
// an advisory lock whose key is the workspace id hashed with the
// schema's seed $2 (Store.seed), so that the keys of different schemas
// differ. It needs no row (a workspace's records may be written before
// its own), and writes nothing.
const lockSQL = "SELECT pg_advisory_xact_lock(hashtextextended($1, $2))"

// lock queues the lock of ws, in an Update that does not hold it yet.
func (t *tx) lock(ws baton.WorkspaceID) {
	if !t.update || t.locked[ws] {
		return
	}
	t.holds(ws)
	t.queued = append(t.queued, queuedWrite{sql: lockSQL, args: []any{string(ws), t.seed}, lock: true})
}

// holds records that the transaction holds the lock of ws.
func (t *tx) holds(ws baton.WorkspaceID) {
	if t.locked == nil {
		t.locked = map[baton.WorkspaceID]bool{}
	}
	t.locked[ws] = true
}

// readable returns store.ErrTxDone once fn has returned, the failure of an
// earlier statement, and the context's error once it is done.
func (t *tx) readable() error {
	if t.done {
		return store.ErrTxDone
	}
	if t.err != nil {
		return t.err
	}
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return nil
}

// checkPut refuses a write inside a View (op names it; baton.ErrInternal),
// then returns the first failed check of the record's keys.
func (t *tx) checkPut(op string, checks ...error) error {
	return backend.Writable(t.readable(), t.update, pkg, op, checks...)
}

// send runs, in one round trip, BEGIN if it was not sent yet, the queued
// writes and locks, then what add queues (its callbacks see the answers).
func (t *tx) send(op string, add func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	if !t.begun {
		if t.update {
			b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
		} else {
			b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
		}
	}
	for _, w := range t.queued {
		q := b.Queue(w.sql, w.args...)
		if !w.lock {
			q.Exec(expectOne)
		}
	}
	if add != nil {
		add(b)
	}
	t.begun = true
	t.queued = t.queued[:0]
	if err := t.conn.SendBatch(t.ctx, b).Close(); err != nil {
		return t.fail(op, err)
	}
	return nil
}

// expectOne checks a queued write: it was queued because its row is known
// to exist, so anything but one row means the store is not what this
// package wrote (a row deleted from outside).
func expectOne(ct pgconn.CommandTag) error {
	if ct.RowsAffected() != 1 {
		return fmt.Errorf("%w: a write matched %d rows, want 1: a row was deleted behind the store", ErrDatabase, ct.RowsAffected())
	}
	return nil
}

// fail records the first failure of the transaction and returns it.
func (t *tx) fail(op string, err error) error {
	if t.err != nil {
		return t.err
	}
	switch {
	case isConflict(err):
		t.conflict = true
		t.err = fmt.Errorf("%w: pgstore: %s: %w", store.ErrTxConflict, op, err)
	case t.ctx.Err() != nil:
		t.err = fmt.Errorf("pgstore: %s: %w", op, t.ctx.Err())
	default:
		t.err = dbErr(op, err)
	}
	return t.err
}

// queue defers a write whose outcome is known until the next round trip,
// after the lock of ws.
func (t *tx) queue(ws baton.WorkspaceID, sql string, args ...any) {
	t.lock(ws)
	t.queued = append(t.queued, queuedWrite{sql: sql, args: args})
}

// exec runs a write now, under the lock of ws (with the queued writes),
// and returns its row count.
func (t *tx) exec(ws baton.WorkspaceID, op, sql string, args ...any) (int64, error) {
	t.lock(ws)
	var n int64
	err := t.send(op, func(b *pgx.Batch) {
		b.Queue(sql, args...).Exec(func(ct pgconn.CommandTag) error {
			n = ct.RowsAffected()
			return nil
		})
	})
	return n, err
}

// queryRow runs a query of one row now and scans it into dest.
func (t *tx) queryRow(op, sql string, args []any, dest ...any) error {
	return t.send(op, func(b *pgx.Batch) {
		b.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(dest...) })
	})
}

// query runs a query now and calls each for every row.
func (t *tx) query(op, sql string, args []any, each func(pgx.Rows) error) error {
	return t.send(op, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				if err := each(rows); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	})
}

// lockedRead runs read, a read of rows of any workspace, whose rows'
// workspaces ws lists, until the transaction holds the lock of each: an
// Update then locks those it lacks, in order, and reads again (their
// rows may have changed before the lock). In a View, or when the read
// found rows only of locked workspaces, it reads once.
func (t *tx) lockedRead(read func() ([]baton.WorkspaceID, error)) error {
	for {
		wss, err := read()
		if err != nil || !t.update {
			return err
		}
		var missing []baton.WorkspaceID
		for _, ws := range wss {
			if !t.locked[ws] && !slices.Contains(missing, ws) {
				missing = append(missing, ws)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		slices.Sort(missing)
		for _, ws := range missing {
			t.lock(ws)
		}
	}
}

// see records that a record exists.
func (t *tx) see(kind, id string) {
	if t.seen == nil {
		t.seen = map[recordKey]struct{}{}
	}
	t.seen[recordKey{kind, id}] = struct{}{}
}

// changes records the value a write left a feed record of workspace ws
// with: at commit the record leaves one change, with its last value, in
// the feed of the workspace of that value.
func (t *tx) changes(ws baton.WorkspaceID, kind, id string, rec any) {
	k := recordKey{kind, id}
	t.feed.Add(k, feedEntry{ws: ws, key: k, rec: rec})
}

// commit sends the queued writes, the change feed entries and COMMIT in
// one round trip. (The notifications follow it: publish.go says why.)
func (t *tx) commit() error {
	if !t.begun && len(t.queued) == 0 && t.feed.Len() == 0 {
		return nil // nothing was read or written
	}
	byWS := map[baton.WorkspaceID][]feedEntry{}
	for e := range t.feed.All() {
		if _, ok := byWS[e.ws]; !ok {
			t.changed = append(t.changed, e.ws)
		}
		byWS[e.ws] = append(byWS[e.ws], e)
	}
	ok := false
	err := t.send("commit", func(b *pgx.Batch) {
		for _, ws := range t.changed {
			kinds, records := encodeFeed(byWS[ws])
			b.Queue(appendFeedSQL, string(ws), kinds, records)
		}
		b.Queue("COMMIT").Exec(func(ct pgconn.CommandTag) error {
			ok = ct.String() == "COMMIT"
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !ok {
		return t.fail("commit", errors.New("the server rolled the transaction back"))
	}
	t.begun = false
	return nil
}

// rollback ends a transaction that will not commit. On a done context it
// uses a short one of its own; if even that fails, the connection is left
// in a transaction and the pool destroys it on release.
func (t *tx) rollback() {
	if !t.begun {
		return
	}
	t.begun = false
	if t.conn.Conn().PgConn().TxStatus() == 'I' {
		return // the failed COMMIT already ended it
	}
	ctx := t.ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
	}
	_, _ = t.conn.Exec(ctx, "ROLLBACK")
}

// rollbackTimeout bounds the rollback of what a done context left open on
// a connection.
const rollbackTimeout = 5 * time.Second
