package pgstore

import (
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// A transaction remembers the workspace, reservation and handoff rows it
// has read or written, and answers a second read of one from memory. That
// is what the server would answer: a View reads one snapshot, and an
// Update remembers only rows of workspaces it holds the lock of, which no
// one else writes until it ends; its own writes pass through the cache
// too.
//
// Read-ahead: in an Update, the first read of one of a workspace's rows
// also fetches, in the same round trip and under the same lock, the
// workspace and reservation rows of that workspace, which nearly every
// transition of a transfer reads or writes next. A Put of a row the
// transaction knows can then be queued, and a transition costs two round
// trips: its first reads, and the COMMIT with its writes.
type cache struct {
	workspaces   map[baton.WorkspaceID]cached[store.Workspace]
	reservations map[baton.WorkspaceID]cached[store.Reservation]
	handoffs     map[baton.HandoffID]cached[store.Handoff]
}

// cached is a row, or its known absence (!ok).
type cached[R any] struct {
	r  R
	ok bool
}

func remember[K comparable, R any](m *map[K]cached[R], k K, r R, ok bool) {
	if *m == nil {
		*m = map[K]cached[R]{}
	}
	(*m)[k] = cached[R]{r, ok}
}

// learn is remember that keeps what is there: a row the transaction has
// already seen is at least as recent as one read ahead.
func learn[K comparable, R any](m *map[K]cached[R], k K, r R, ok bool) {
	if _, have := (*m)[k]; !have {
		remember(m, k, r, ok)
	}
}

// seeHandoff remembers h as the handoff's current value.
func (t *tx) seeHandoff(h store.Handoff) {
	h.History = slices.Clone(h.History)
	remember(&t.cache.handoffs, h.ID, h, true)
}

// readAhead queues on b the reads of the workspace and reservation rows of
// the workspace the SQL expression wsExpr (over $1, arg) names, that the
// transaction does not know yet, in an Update. known is that workspace
// when the caller knows it ("" otherwise): then the transaction holds, or
// has queued, its lock, and a missing row is remembered as missing;
// otherwise a row is remembered only if, when its answer comes, the
// transaction holds the lock of the workspace it names (the statement
// before took it, see GetHandoff).
func (t *tx) readAhead(b *pgx.Batch, wsExpr string, arg any, known baton.WorkspaceID) {
	if !t.update {
		return
	}
	readAheadRow(t, b, workspaces, &t.cache.workspaces, "id = "+wsExpr, arg, known)
	readAheadRow(t, b, reservations, &t.cache.reservations, "workspace = "+wsExpr, arg, known)
}

// readAheadRow queues on b the read of the row of tb (where: its
// predicate) into the cache m unless m knows it, as readAhead says.
func readAheadRow[R any](t *tx, b *pgx.Batch, tb *table[R], m *map[baton.WorkspaceID]cached[R], where string, arg any,
	known baton.WorkspaceID) {
	if _, have := (*m)[known]; known != "" && have {
		return
	}
	b.Queue(tb.selectSQL+" WHERE "+where, arg).Query(func(rows pgx.Rows) error {
		r, found, err := scanOne(rows, tb.scan)
		switch {
		case found && t.locked[tb.ws(r)]:
			learn(m, tb.ws(r), r, true)
		case !found && known != "":
			learn(m, known, r, false)
		}
		return err
	})
}

// scanOne reads the row a query by primary key returned, if any.
func scanOne[R any](rows pgx.Rows, scan func(pgx.Row) (R, error)) (r R, found bool, err error) {
	for rows.Next() {
		if r, err = scan(rows); err != nil {
			return r, false, err
		}
		found = true
	}
	return r, found, rows.Err()
}
