package pgstore

import (
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// A transaction remembers the workspace, reservation and handoff rows it
// has read or written, and answers a second read of one from memory. That
// is what the server would answer: the transaction reads one snapshot,
// which only its own writes change, and those pass through the cache too.
//
// Across transactions, an Update also answers a read of a row this
// transaction has not read from the Store's row cache (rowcache.go),
// recording the version it assumed, which its next statement batch
// checks on the server before anything else. See the package doc for why
// that is as safe as reading the row.
//
// Read-ahead: in an Update, the first read of one of a workspace's rows
// also fetches, in the same round trip, the workspace and reservation rows
// of that workspace, which nearly every transition of a transfer reads or
// writes next. A Put of a row the transaction knows can then be queued,
// and a transition whose rows the row cache lacks costs two round trips:
// its first read, and the COMMIT with its writes; the rows it read or
// wrote then go to the row cache, and its next transition costs one.
// (The extra reads are index lookups; under SERIALIZABLE they may only add
// conflicts, never hide one.)
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

func (t *tx) seeWorkspace(w store.Workspace) {
	w.Running = slices.Clone(w.Running)
	remember(&t.cache.workspaces, w.ID, w, true)
}

func (t *tx) seeReservation(r store.Reservation) {
	remember(&t.cache.reservations, r.Workspace, r, true)
}

// seeHandoff remembers h as the handoff's current value.
func (t *tx) seeHandoff(h store.Handoff) {
	h.History = slices.Clone(h.History)
	remember(&t.cache.handoffs, h.ID, h, true)
}

// cachedHandoff returns a copy of the remembered handoff, or of the row
// cache's.
func (t *tx) cachedHandoff(id baton.HandoffID) (c cached[store.Handoff], have bool) {
	c, have = t.cache.handoffs[id]
	if !have {
		if v, ok := t.fromRows(recordKey{kindHandoff, string(id)}); ok {
			t.seeHandoff(v.(store.Handoff))
			c, have = t.cache.handoffs[id]
		}
	}
	c.r.History = slices.Clone(c.r.History)
	return c, have
}

// cachedWorkspace loads the row cache's workspace id, if it has it, into
// the transaction's cache, unless that knows the workspace.
func (t *tx) cachedWorkspace(id baton.WorkspaceID) {
	if _, have := t.cache.workspaces[id]; !have {
		if v, ok := t.fromRows(recordKey{kindWorkspace, string(id)}); ok {
			remember(&t.cache.workspaces, id, v.(store.Workspace), true) // v is ours
		}
	}
}

// cachedReservation is cachedWorkspace for the reservation of ws.
func (t *tx) cachedReservation(ws baton.WorkspaceID) {
	if _, have := t.cache.reservations[ws]; !have {
		if v, ok := t.fromRows(recordKey{kindReservation, string(ws)}); ok {
			remember(&t.cache.reservations, ws, v.(store.Reservation), true)
		}
	}
}

// recordWorkspace records a workspace row read from the server (its own
// copy) for the row cache.
func (t *tx) recordWorkspace(w store.Workspace, version int64) {
	w.Running = slices.Clone(w.Running)
	t.record(recordKey{kindWorkspace, string(w.ID)}, cachedRow{w, version})
}

// recordHandoff is recordWorkspace for a handoff.
func (t *tx) recordHandoff(h store.Handoff, version int64) {
	h.History = slices.Clone(h.History)
	t.record(recordKey{kindHandoff, string(h.ID)}, cachedRow{h, version})
}

// readAhead queues on b the reads of the workspace and reservation rows of
// ws (an SQL expression over $1) that the transaction does not know yet;
// the rows land in the cache, keyed by the workspace the row names. known
// is the workspace id when the caller knows it ("" otherwise), so that a
// missing row can be remembered as missing.
func (t *tx) readAhead(b *pgx.Batch, wsExpr string, arg any, known baton.WorkspaceID) {
	if !t.update {
		return
	}
	_, haveW := t.cache.workspaces[known]
	_, haveR := t.cache.reservations[known]
	if known == "" || !haveW {
		b.Queue(workspaces.selectSQL+" WHERE id = "+wsExpr, arg).Query(func(rows pgx.Rows) error {
			found := false
			for rows.Next() {
				w, v, err := workspaces.scanV(rows)
				if err != nil {
					return err
				}
				found = true
				t.recordWorkspace(w, v)
				learn(&t.cache.workspaces, w.ID, w, true)
			}
			if !found && known != "" {
				learn(&t.cache.workspaces, known, store.Workspace{}, false)
			}
			return rows.Err()
		})
	}
	if known == "" || !haveR {
		b.Queue(reservations.selectSQL+" WHERE workspace = "+wsExpr, arg).Query(func(rows pgx.Rows) error {
			found := false
			for rows.Next() {
				r, v, err := reservations.scanV(rows)
				if err != nil {
					return err
				}
				found = true
				t.record(recordKey{kindReservation, string(r.Workspace)}, cachedRow{r, v})
				learn(&t.cache.reservations, r.Workspace, r, true)
			}
			if !found && known != "" {
				learn(&t.cache.reservations, known, store.Reservation{}, false)
			}
			return rows.Err()
		})
	}
}
