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
)

// tx is a store.Tx on one pooled connection.
//
// Round trips: BEGIN is not sent on its own but with the first statement,
// and writes whose outcome is already known are not sent when they are
// made but queued, and go with the next statement that needs an answer (a
// read, a write that may fail) or with the COMMIT, all in one pgx batch.
// The server runs a batch's statements in order and skips the rest of it
// after a failure, so a read still sees every earlier write of the
// transaction, and a COMMIT never follows a failed write.
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
	update bool
	alone  bool  // an Update that takes the gate exclusively (see gateAfter)
	gate   int64 // the advisory lock of the gate (see gateAfter)
	begun  bool  // BEGIN has been sent
	done   bool

	queued []queuedWrite
	// err is the first failed statement: the server has aborted the
	// transaction, so every later call returns it and the Update does not
	// commit. conflict says it is worth a retry; stale says a row read
	// from the Store's row cache had changed (worth a retry without it).
	err      error
	conflict bool
	stale    bool
	// headFromCache says the commit numbers a feed's changes from a Seq
	// the row cache held, which may not be the last (feed.go).
	headFromCache bool

	// The Store's row cache (rowcache.go), in an Update: rows answers
	// reads when fromCache, and takes the rows of fresh after a commit.
	// assumed are the rows answered from it that the server has not
	// checked yet (the next batch checks them first); touched lists every
	// row answered from it, which a failed attempt drops.
	rows      *rowCache
	fromCache bool
	assumed   []assumption
	touched   []recordKey
	fresh     map[recordKey]cachedRow

	// seen holds the records known to exist (read or written here), by
	// kind and id; cache the rows a transition reads most (cache.go).
	seen  map[recordKey]struct{}
	cache cache
	// feed holds, per workspace, the records to append to its change
	// feed at commit (their last values), in the order first written;
	// changed lists those workspaces in the same order. sessionSeqs are
	// the Seqs of the sessions seen, which a session's change carries.
	feed        map[baton.WorkspaceID][]feedEntry
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
	// A write of a cached kind returns the row it wrote: row reads it,
	// and it goes to fresh under key.
	key recordKey
	row func(pgx.Row) (cachedRow, error)
	// checked is the same write checked against the row's version (a
	// table's checkedSQL), if it has one: when the transaction took the
	// row from the row cache, the batch sends that instead of the write
	// and a check of its own.
	checked string
}

// assumption is a row a transaction read from the row cache, at version.
type assumption struct {
	key     recordKey
	version int64
}

func newTx(ctx context.Context, conn *pgxpool.Conn, update, alone bool, gate int64) *tx {
	return &tx{ctx: ctx, conn: conn, update: update, alone: alone, gate: gate}
}

// checkSQL, by kind, raises codeStale (through stale_row, migration 0004)
// unless the row keyed $1 has the version $2: the check of a cached row
// that no queued write of the batch carries (a table's checkedSQL). It
// reads the version through the primary key, at the transaction's
// snapshot: under SERIALIZABLE, a read like any other. (One statement per
// row: a single statement over arrays of rows costs more to plan, every
// time, than a few of these.)
var checkSQL = map[string]string{
	kindWorkspace:   checkRowSQL("workspace", "SELECT version FROM workspaces WHERE id = $1"),
	kindReservation: checkRowSQL("reservation", "SELECT version FROM reservations WHERE workspace = $1"),
	kindHandoff:     checkRowSQL("handoff", "SELECT version FROM handoffs WHERE id = $1"),
}

func checkRowSQL(kind, version string) string {
	return "SELECT stale_row('" + kind + "', $1, $2) WHERE $2::bigint IS DISTINCT FROM (" + version + ")"
}

// The gate keeps an Update that keeps losing serialization races from
// losing for ever. Serializable transactions of different workspaces
// conflict when their rows share index pages, which on small tables they
// all do; an Update of many round trips, among many short concurrent ones,
// can then be caught in a cycle on every attempt. An attempt after
// gateAfter lost ones runs alone: it waits for the Updates under way, in
// this process or another, to end, and the Updates that start meanwhile
// wait for it; a transaction that runs alone cannot lose a serialization
// race. Its snapshot must be taken after the wait, so it waits before its
// first statement that reads.
//
// The gate has two locks, one for each way an Update begins:
//
//   - An Update of one round trip (its rows cached: the commit batch is
//     its first) runs in the implicit transaction of its pipeline, with
//     no BEGIN or COMMIT statement (the Sync at the batch's end commits
//     it); its first statement takes the advisory lock gateKey in shared
//     mode, for the transaction (gateSharedSQL).
//   - Any other Update begins with BEGIN and takes the schema_migrations
//     table in ACCESS SHARE mode (gateShared), which conflicts with
//     nothing it does. (This is also the gate of pgstore versions before
//     the advisory lock, which such an Update keeps out of the way.)
//
// An attempt that runs alone first takes the advisory lock exclusively
// for its session, in a transaction of its own (Store.enterAlone), then
// begins and takes the table in ACCESS EXCLUSIVE mode (gateAlone). Both
// waits come before its snapshot: the lock is taken before the
// transaction begins, and LOCK TABLE takes no snapshot. Each wait is
// bounded by gateTimeout (a process frozen in an Update holds the gate),
// after which the attempt counts as one more lost; the session lock is
// released when the attempt ends (Store.leaveAlone).
//
// The table is schema_migrations, which every schema of this package has
// and which no Update reads or writes; the advisory lock's key is
// hashtextextended('baton.pgstore.gate:' || schema, 0) (Store.gateKey).
const (
	gateAfter     = 3
	gateTimeout   = "1s"
	gateShared    = "LOCK TABLE schema_migrations IN ACCESS SHARE MODE"
	gateAlone     = "LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE"
	gateSharedSQL = "SELECT pg_advisory_xact_lock_shared($1)"
)

// readable returns ErrTxDone once fn has returned, the failure of an
// earlier statement, and the context's error once it is done.
func (t *tx) readable() error {
	if t.done {
		return ErrTxDone
	}
	if t.err != nil {
		return t.err
	}
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return nil
}

// writable adds store.ErrReadOnly inside a View.
func (t *tx) writable(op string) error {
	if err := t.readable(); err != nil {
		return err
	}
	if !t.update {
		return baton.Errorf(store.ErrReadOnly, "pgstore: %s", op)
	}
	return nil
}

func (t *tx) beginSQL() string {
	if t.update {
		return "BEGIN ISOLATION LEVEL SERIALIZABLE"
	}
	return "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
}

// send runs, in one round trip, BEGIN if it was not sent yet, the queued
// writes, then what add queues (its callbacks see the answers).
func (t *tx) send(op string, add func(b *pgx.Batch)) error {
	return t.sendBatch(op, false, add)
}

// sendBatch is send; with implicit, the batch is the whole transaction
// and is sent without BEGIN (see commit).
func (t *tx) sendBatch(op string, implicit bool, add func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	switch {
	case implicit:
		b.Queue(gateSharedSQL, t.gate)
	case !t.begun:
		b.Queue(t.beginSQL())
		switch {
		case t.update && t.alone:
			b.Queue("SET LOCAL lock_timeout = '" + gateTimeout + "'")
			b.Queue(gateAlone)
			b.Queue("SET LOCAL lock_timeout = DEFAULT")
		case t.update:
			b.Queue(gateShared)
		}
	}
	// Before anything else: the queued writes may rewrite these rows. The
	// first queued write of such a row, if it can, checks it instead.
	for _, a := range t.assumed {
		if i := t.firstWrite(a.key); i >= 0 && t.queued[i].checked != "" {
			w := &t.queued[i]
			w.sql, w.args, w.checked = w.checked, append(slices.Clip(w.args), a.version), ""
			continue
		}
		b.Queue(checkSQL[a.key.kind], a.key.id, a.version).Exec(func(pgconn.CommandTag) error { return nil })
	}
	for _, w := range t.queued {
		if w.row == nil {
			b.Queue(w.sql, w.args...).Exec(expectOne)
			continue
		}
		b.Queue(w.sql, w.args...).Query(func(rows pgx.Rows) error {
			n, err := t.collect(rows, w.key, w.row)
			if err == nil && n != 1 {
				err = expectOne(pgconn.NewCommandTag(fmt.Sprintf("UPDATE %d", n)))
			}
			return err
		})
	}
	if add != nil {
		add(b)
	}
	t.begun = !implicit // an implicit transaction ends with its batch
	t.queued = t.queued[:0]
	t.assumed = t.assumed[:0]
	if err := t.conn.SendBatch(t.ctx, b).Close(); err != nil {
		return t.fail(op, err)
	}
	return nil
}

// firstWrite returns the index of the first queued write of row k, -1 if
// none.
func (t *tx) firstWrite(k recordKey) int {
	for i := range t.queued {
		if t.queued[i].row != nil && t.queued[i].key == k {
			return i
		}
	}
	return -1
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
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == codeStale,
		errors.As(err, &pe) && pe.Code == codeUnique && pe.ConstraintName == changesKey && t.headFromCache:
		// A cached row changed, or the cached last Seq of a workspace's
		// feed is not the last any more (feed.go).
		t.stale = true
		t.err = fmt.Errorf("%w: pgstore: %s: %w", store.ErrTxConflict, op, err)
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

// queue defers a write whose outcome is known until the next round trip.
func (t *tx) queue(sql string, args ...any) {
	t.queued = append(t.queued, queuedWrite{sql: sql, args: args})
}

// exec runs a write now (with the queued ones) and returns its row count.
func (t *tx) exec(op, sql string, args ...any) (int64, error) {
	var n int64
	err := t.send(op, func(b *pgx.Batch) {
		b.Queue(sql, args...).Exec(func(ct pgconn.CommandTag) error {
			n = ct.RowsAffected()
			return nil
		})
	})
	return n, err
}

// queueRow is queue for a write that returns the row it wrote (exactly
// one), which goes to fresh under k.
func (t *tx) queueRow(k recordKey, row func(pgx.Row) (cachedRow, error), sql string, args ...any) {
	t.queued = append(t.queued, queuedWrite{sql: sql, args: args, key: k, row: row})
}

// queueChecked is queueRow for a write that has a checked form (see
// queuedWrite.checked), whose arguments are args and the version.
func (t *tx) queueChecked(k recordKey, row func(pgx.Row) (cachedRow, error), sql, checked string, args ...any) {
	t.queued = append(t.queued, queuedWrite{sql: sql, args: args, key: k, row: row, checked: checked})
}

// execRow is exec for a write that returns the row it wrote, if any,
// which goes to fresh under k.
func (t *tx) execRow(op string, k recordKey, row func(pgx.Row) (cachedRow, error), sql string, args ...any) (int64, error) {
	var n int64
	err := t.send(op, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			var err error
			n, err = t.collect(rows, k, row)
			return err
		})
	})
	return n, err
}

// collect reads the rows a write returned into fresh and counts them.
func (t *tx) collect(rows pgx.Rows, k recordKey, row func(pgx.Row) (cachedRow, error)) (int64, error) {
	var n int64
	for rows.Next() {
		r, err := row(rows)
		if err != nil {
			return n, err
		}
		n++
		t.record(k, r)
	}
	return n, rows.Err()
}

// record keeps a row as the server returned it in this transaction (read
// or written), for the row cache after the commit; a later statement's
// answer replaces an earlier one's. r is the transaction's own.
func (t *tx) record(k recordKey, r cachedRow) {
	if t.rows == nil {
		return
	}
	if t.fresh == nil {
		t.fresh = map[recordKey]cachedRow{}
	}
	t.fresh[k] = r
}

// fromRows returns a copy of row k of the Store's row cache, if the
// transaction may answer reads from it, and records the assumption that
// the row has that version, which the next batch checks.
func (t *tx) fromRows(k recordKey) (any, bool) {
	if !t.fromCache {
		return nil, false
	}
	r, ok := t.rows.get(k)
	if !ok {
		return nil, false
	}
	t.assumed = append(t.assumed, assumption{k, r.version})
	t.touched = append(t.touched, k)
	return r.value, true
}

// rowExists reports that row k exists because the row cache holds it:
// rows are never deleted, and the cache holds only committed rows, so the
// snapshot the transaction has yet to take (it has not begun) will hold
// it too. (Once it has begun, its snapshot may predate the row.) A write
// of the row can then be queued; it does not depend on the cached value,
// so nothing is assumed.
func (t *tx) rowExists(k recordKey) bool {
	return t.fromCache && !t.begun && t.rows.has(k)
}

// queryRow runs a single-row query now; found is false when it returned no
// row. scan is called with the row.
func (t *tx) queryRow(op, sql string, args []any, scan func(pgx.Row) error) (found bool, err error) {
	err = t.send(op, func(b *pgx.Batch) {
		b.Queue(sql, args...).QueryRow(func(row pgx.Row) error {
			err := scan(row)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			found = err == nil
			return err
		})
	})
	return found, err
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

// see records that a record exists.
func (t *tx) see(kind, id string) {
	if t.seen == nil {
		t.seen = map[recordKey]struct{}{}
	}
	t.seen[recordKey{kind, id}] = struct{}{}
}

func (t *tx) known(kind, id string) bool {
	_, ok := t.seen[recordKey{kind, id}]
	return ok
}

// changes records the value a write left a feed record with: at commit
// the workspace's feed gets one change per record, with its last value.
func (t *tx) changes(ws baton.WorkspaceID, kind, id string, rec any) {
	if t.feed == nil {
		t.feed = map[baton.WorkspaceID][]feedEntry{}
	}
	entries, ok := t.feed[ws]
	if !ok {
		t.changed = append(t.changed, ws)
	}
	k := recordKey{kind, id}
	for i := range entries {
		if entries[i].key == k {
			entries[i].rec = rec
			return
		}
	}
	t.feed[ws] = append(entries, feedEntry{key: k, rec: rec})
}

// commit sends the queued writes, the change feed entries and COMMIT in
// one round trip. (The notifications follow it: publish.go says why.)
//
// An Update that has sent nothing yet (its reads were answered from the
// row cache) is one batch: it is sent without BEGIN and COMMIT, as the
// implicit transaction PostgreSQL runs a pipeline's statements in up to
// its Sync, which commits it (or rolls it back when a statement failed,
// the others then skipped); a failure to commit, like a serialization
// failure found at commit, is the answer to the Sync, which the batch
// returns. The pool's connections make serializable their default
// isolation level (Open), so the implicit transaction is serializable
// too. Two statements fewer: with rows cached, a transition is mostly its
// statements and the WAL flush, and BEGIN and COMMIT cost as much as one
// of its writes. (Not when the Update runs alone: see gateAfter.)
func (t *tx) commit() error {
	if !t.begun && len(t.queued) == 0 && len(t.changed) == 0 && len(t.assumed) == 0 {
		return nil // nothing was read or written
	}
	implicit := !t.begun && t.update && !t.alone
	ok := implicit
	err := t.sendBatch("commit", implicit, func(b *pgx.Batch) {
		for _, ws := range t.changed {
			t.appendFeed(b, ws)
		}
		if !implicit {
			b.Queue("COMMIT").Exec(func(ct pgconn.CommandTag) error {
				ok = ct.String() == "COMMIT"
				return nil
			})
		}
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

// appendFeed queues the append of ws's changes to its feed (feed.go says
// how they are numbered), from the last Seq the row cache holds for it if
// the transaction may use the cache, and records the Seq it ends at, for
// the cache once committed.
func (t *tx) appendFeed(b *pgx.Batch, ws baton.WorkspaceID) {
	kinds, records := encodeFeed(t.feed[ws])
	k := recordKey{kindFeed, string(ws)}
	if t.fromCache {
		if r, ok := t.rows.get(k); ok {
			t.headFromCache = true
			t.touched = append(t.touched, k)
			last := r.version + int64(len(kinds))
			if len(kinds) == 1 {
				b.Queue(appendAtSQL, string(ws), last, kinds[0], records[0])
			} else {
				b.Queue(appendFeedSQL, string(ws), r.version, kinds, records)
			}
			t.record(k, cachedRow{value: feedHead{}, version: last})
			return
		}
	}
	b.Queue(appendFeedSQL, string(ws), nil, kinds, records).Query(func(rows pgx.Rows) error {
		var last int64
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				return err
			}
			last = max(last, seq)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		t.record(k, cachedRow{value: feedHead{}, version: last})
		return nil
	})
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
	ctx, cancel := cleanupContext(t.ctx)
	defer cancel()
	_, _ = t.conn.Exec(ctx, "ROLLBACK")
}

// cleanupTimeout bounds the statements that end what a done context left
// open on a connection (a rollback, the release of the gate).
const cleanupTimeout = 5 * time.Second

// cleanupContext returns ctx while it is not done, and once it is, a
// context of its own, bounded by cleanupTimeout.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// required refuses an empty key field.
func required[K ~string](kind, field string, k K) error {
	if k == "" {
		return baton.Errorf(baton.ErrInvalid, "pgstore: %s: %s is empty", kind, field)
	}
	return nil
}

func notFound[K ~string](kind string, k K) error {
	return baton.Errorf(store.ErrNotFound, "pgstore: %s %q", kind, string(k))
}

func duplicate[K ~string](kind string, k K) error {
	return baton.Errorf(store.ErrDuplicate, "pgstore: %s %q exists", kind, string(k))
}
