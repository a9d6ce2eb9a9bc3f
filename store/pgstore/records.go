package pgstore

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// table describes how one record kind maps onto its table: cols are the
// columns a write sets, id first; fields returns pointers to the fields
// of a record that hold them, in that order, followed by those of the
// read-only columns (set by the server), which a scan reads too: the
// targets of a scan and the arguments of a write; ws returns the
// workspace a record belongs to.
type table[R any] struct {
	kind   string // "workspace", ...: for errors and the seen set
	name   string
	cols   []string
	fields func(*R) []any
	ws     func(R) baton.WorkspaceID

	selectSQL string // SELECT cols FROM name (no WHERE)
	getSQL    string // ... WHERE <key> = $1 (the key is the first column)
	insertSQL string // INSERT ... ON CONFLICT DO NOTHING
	upsertSQL string // INSERT ... ON CONFLICT (<key>) DO UPDATE SET every column but the key
	updateSQL string // UPDATE ... SET every column but the key WHERE <key> = $1
	// lockSQL takes the lock of the workspace of the row keyed $1, if there
	// is one; its row count says whether there was.
	lockSQL string
	// updates holds, by the mask of the columns they set, the updates
	// diff returns.
	updates sync.Map
}

// diff returns the update of a row from old, its value as the
// transaction knows it, to r that sets only the columns whose values
// differ, and its arguments. Leaving a column out writes what the full
// update would: the stored value is a function of the Go value, and old
// is what the row holds, as read or as this transaction wrote it. Most
// transitions change a few fields of a handoff; the full update would
// send, and the server parse, every one, its JSON columns included.
func (tb *table[R]) diff(old, r R) (sql string, args []any) {
	was, now := tb.args(old), tb.args(r)
	args = append(make([]any, 0, len(now)), now[0])
	var mask uint64
	for i := 1; i < len(now); i++ {
		if !sameArg(was[i], now[i]) {
			mask |= 1 << i
			args = append(args, now[i])
		}
	}
	if len(args) == 1 {
		return "", nil // nothing changes
	}
	if u, ok := tb.updates.Load(mask); ok {
		return u.(string), args
	}
	sets := make([]string, 0, len(args))
	for i, n := 1, 2; i < len(tb.cols); i++ {
		if mask&(1<<i) != 0 {
			sets = append(sets, tb.cols[i]+" = $"+strconv.Itoa(n))
			n++
		}
	}
	sql = "UPDATE " + tb.name + " SET " + strings.Join(sets, ", ") + " WHERE " + tb.cols[0] + " = $1"
	tb.updates.Store(mask, sql)
	return sql, args
}

// sameArg reports whether two arguments of a column (pointers, as args
// returns them) write the same value: equal values do; times compare as
// stored, to the microsecond.
func sameArg(a, b any) bool {
	x, y := reflect.ValueOf(a), reflect.ValueOf(b)
	if x.Kind() == reflect.Pointer {
		x, y = x.Elem(), y.Elem()
	}
	if t, ok := x.Interface().(time.Time); ok {
		return t.Truncate(time.Microsecond).Equal(y.Interface().(time.Time).Truncate(time.Microsecond))
	}
	return reflect.DeepEqual(x.Interface(), y.Interface())
}

// scan reads a row of the table's columns, read-only ones included.
func (tb *table[R]) scan(row pgx.Row) (R, error) {
	var r R
	fields := tb.fields(&r)
	err := row.Scan(fields...)
	for _, f := range fields {
		if ids, ok := f.(*[]baton.SessionID); ok {
			*ids = records.Clone(*ids) // nil when empty, as the store keeps it
		}
	}
	return r, err
}

// args returns the arguments of a write of r: pointers into a copy of it,
// but for a list of session ids, written as a text[] (an empty one rather
// than NULL).
func (tb *table[R]) args(r R) []any {
	args := tb.fields(&r)[:len(tb.cols)]
	for i, a := range args {
		if ids, ok := a.(*[]baton.SessionID); ok {
			strs := make([]string, 0, len(*ids))
			for _, id := range *ids {
				strs = append(strs, string(id))
			}
			args[i] = strs
		}
	}
	return args
}

// token reads and writes a baton.TokenHash as a bytea (pgtype's
// BytesScanner and BytesValuer); an empty bytea reads as the zero hash.
type token struct{ h *baton.TokenHash }

func (t token) ScanBytes(b []byte) error {
	if len(b) != 0 && len(b) != len(t.h) {
		return fmt.Errorf("%w: a token hash of %d bytes", ErrDatabase, len(b))
	}
	*t.h = baton.TokenHash{}
	copy(t.h[:], b)
	return nil
}

func (t token) BytesValue() ([]byte, error) { return t.h[:], nil }

func newTable[R any](kind, name string, cols []string, fields func(*R) []any, ws func(R) baton.WorkspaceID,
	readOnly ...string) *table[R] {
	t := &table[R]{kind: kind, name: name, cols: cols, fields: fields, ws: ws}
	list := strings.Join(cols, ", ")
	t.selectSQL = "SELECT " + strings.Join(append(slices.Clone(cols), readOnly...), ", ") + " FROM " + name
	t.getSQL = t.selectSQL + " WHERE " + cols[0] + " = $1"
	t.lockSQL = "SELECT pg_advisory_xact_lock(hashtextextended(workspace, $2)) FROM " + name + " WHERE " + cols[0] + " = $1"
	params := make([]string, len(cols))
	sets := make([]string, 0, len(cols)-1)
	excluded := make([]string, 0, len(cols)-1)
	for i, c := range cols {
		params[i] = "$" + strconv.Itoa(i+1)
		if i > 0 {
			sets = append(sets, c+" = "+params[i])
			excluded = append(excluded, c+" = EXCLUDED."+c)
		}
	}
	t.insertSQL = "INSERT INTO " + name + " (" + list + ") VALUES (" + strings.Join(params, ", ") + ") ON CONFLICT DO NOTHING"
	t.updateSQL = "UPDATE " + name + " SET " + strings.Join(sets, ", ") + " WHERE " + cols[0] + " = $1"
	t.upsertSQL = "INSERT INTO " + name + " (" + list + ") VALUES (" + strings.Join(params, ", ") + ") ON CONFLICT (" + cols[0] +
		") DO UPDATE SET " + strings.Join(excluded, ", ")
	return t
}

// getLocked reads the record id of tb, which the transaction may not know
// the workspace of: in an Update, the statement before the read takes
// the lock of the row's workspace (lockSQL), and a row the lock did not
// find (inserted in between) is read again under its lock (lockedRead).
// read, if not nil, queues more reads after it in the same round trip.
func getLocked[R any](t *tx, tb *table[R], id string, read func(b *pgx.Batch)) (r R, found bool, err error) {
	err = t.lockedRead(func() ([]baton.WorkspaceID, error) {
		var lockedRows int64
		found = false
		err := t.send("get "+tb.kind, func(b *pgx.Batch) {
			if t.update {
				b.Queue(tb.lockSQL, id, t.seed).Exec(func(ct pgconn.CommandTag) error {
					lockedRows = ct.RowsAffected()
					return nil
				})
			}
			b.Queue(tb.getSQL, id).Query(func(rows pgx.Rows) error {
				var err error
				if r, found, err = scanOne(rows, tb.scan); found && lockedRows == 1 {
					t.holds(tb.ws(r))
				}
				return err
			})
			if read != nil {
				read(b)
			}
		})
		if err != nil || !found {
			return nil, err
		}
		return []baton.WorkspaceID{tb.ws(r)}, nil
	})
	return r, found, err
}

// get reads the record id; store.ErrNotFound if absent.
func get[R any](t *tx, tb *table[R], id string) (R, error) {
	if err := t.readable(); err != nil {
		var zero R
		return zero, err
	}
	r, found, err := getLocked(t, tb, id, nil)
	if err != nil {
		return r, err
	}
	if !found {
		return r, backend.NotFound(pkg, tb.kind, id)
	}
	t.see(tb.kind, id)
	return r, nil
}

// list runs a query of tb's columns (where and order appended to its
// SELECT) and returns the records: in an Update, under the lock of ws,
// or with no lock at all when ws is "" (a list across workspaces).
func list[R any](t *tx, tb *table[R], ws baton.WorkspaceID, rest string, args ...any) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	if ws != "" {
		t.lock(ws)
	}
	var rs []R
	err := t.query("list "+tb.name, tb.selectSQL+" "+rest, args, func(rows pgx.Rows) error {
		r, err := tb.scan(rows)
		if err != nil {
			return err
		}
		rs = append(rs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// put inserts r or replaces the record id with it, under the lock of its
// workspace, queued: a record this transaction has seen is updated, another
// upserted on its key, which no other uniqueness rule constrains.
func put[R any](t *tx, tb *table[R], id string, r R) {
	sql := tb.upsertSQL
	if _, known := t.seen[recordKey{tb.kind, id}]; known {
		sql = tb.updateSQL
	}
	t.queue(tb.ws(r), sql, tb.args(r)...)
	t.see(tb.kind, id)
}

// putChecked is the body of a Put of a record of tb whose id is its only
// uniqueness rule: it refuses a write in a View (op names it) and an
// empty id or workspace, then writes r (put).
func putChecked[R any](t *tx, tb *table[R], op, id string, r R) error {
	if err := t.checkPut(op, backend.Required(pkg, tb.kind, "ID", id), backend.Required(pkg, tb.kind, "Workspace", tb.ws(r))); err != nil {
		return err
	}
	put(t, tb, id, r)
	return nil
}

// Record kinds named besides their tables, also the change feed's kinds
// where they have one.
const (
	kindWorkspace   = "workspace"
	kindSession     = "session"
	kindHandoff     = "handoff"
	kindInstruction = "instruction"
)

var workspaces = newTable(kindWorkspace, "workspaces",
	[]string{"id", "name", "mission", "root", "config", "current_session", "activation_counter",
		"running", "rank_head", "ranked", "archived", "created_at", "updated_at", "share", "pressure"},
	func(w *store.Workspace) []any {
		return []any{&w.ID, &w.Name, &w.Mission, &w.Root, &w.Config, &w.CurrentSession,
			&w.ActivationCounter, &w.Running, &w.RankHead, &w.Ranked, &w.Archived, &w.CreatedAt, &w.UpdatedAt, &w.Share, &w.Pressure}
	},
	func(w store.Workspace) baton.WorkspaceID { return w.ID })

// GetWorkspace returns the workspace id; store.ErrNotFound if absent. In
// an Update it reads ahead the workspace's reservation.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	w, err := getOfWorkspace(t, workspaces, &t.cache.workspaces, id, kindWorkspace)
	w.Running = slices.Clone(w.Running) // the caller's own
	return w, err
}

// getOfWorkspace reads the row of tb keyed by workspace ws (the workspace
// row, its reservation row) through the cache m, reading ahead the other
// row of ws in an Update; store.ErrNotFound (naming what) if absent.
func getOfWorkspace[R any](t *tx, tb *table[R], m *map[baton.WorkspaceID]cached[R], ws baton.WorkspaceID, what string) (R, error) {
	var zero R
	if err := t.readable(); err != nil {
		return zero, err
	}
	if _, have := (*m)[ws]; !have {
		t.lock(ws)
		err := t.send("get "+tb.kind, func(b *pgx.Batch) {
			b.Queue(tb.getSQL, string(ws)).Query(func(rows pgx.Rows) error {
				r, found, err := scanOne(rows, tb.scan)
				remember(m, ws, r, found)
				return err
			})
			t.readAhead(b, "$1", string(ws), ws)
		})
		if err != nil {
			return zero, err
		}
	}
	c := (*m)[ws]
	if !c.ok {
		return zero, backend.NotFound(pkg, what, ws)
	}
	return c.r, nil
}

// PutWorkspace inserts or replaces w; baton.ErrInvalid if the id is
// empty. It cannot fail otherwise, so it is queued.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.checkPut("PutWorkspace", backend.Required(pkg, "workspace", "ID", w.ID)); err != nil {
		return err
	}
	if c := t.cache.workspaces[w.ID]; c.ok {
		t.see(kindWorkspace, string(w.ID))
	}
	put(t, workspaces, string(w.ID), w)
	w.Running = slices.Clone(w.Running) // the cache's own
	remember(&t.cache.workspaces, w.ID, w, true)
	return nil
}

// ListWorkspaces returns every workspace in insert order.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	return list(t, workspaces, "", "ORDER BY ord")
}

// reservations are keyed by workspace, and written by an upsert
// (PutReservation inserts or replaces).
var reservations = newTable("reservation", "reservations",
	[]string{"workspace", "held", "handoff", "owner", "epoch", "lease_holder", "lease_expires", "lease_store", "updated_at"},
	func(r *store.Reservation) []any {
		return []any{&r.Workspace, &r.Held, &r.Handoff, token{&r.Owner}, &r.Epoch, &r.LeaseHolder,
			&r.LeaseExpires, &r.LeaseStore, &r.UpdatedAt}
	},
	func(r store.Reservation) baton.WorkspaceID { return r.Workspace })

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// it was never taken. In an Update it reads ahead the workspace row.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	return getOfWorkspace(t, reservations, &t.cache.reservations, ws, "reservation of workspace")
}

// PutReservation inserts or replaces the row of r.Workspace; baton.ErrInvalid
// if r.Workspace is empty. It cannot fail otherwise, so it is queued.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := t.checkPut("PutReservation", backend.Required(pkg, "reservation", "Workspace", r.Workspace)); err != nil {
		return err
	}
	t.queue(r.Workspace, reservations.upsertSQL, reservations.args(r)...)
	remember(&t.cache.reservations, r.Workspace, r, true)
	return nil
}

// sessions: seq is an identity column the server sets on insert, so it
// is read (the read-only column) but never written.
var sessions = newTable(kindSession, "sessions",
	[]string{"id", "workspace", "config", "native_id", "actual_model", "engine_version", "status", "activation_order", "started_at",
		"ended_at", "end_reason", "created_at", "rank_above", "rank_below",
		"context_tokens", "context_window", "usage_launch", "pressure"},
	func(s *store.Session) []any {
		return []any{&s.ID, &s.Workspace, &s.Config, &s.NativeID, &s.ActualModel, &s.EngineVersion, &s.Status, &s.ActivationOrder,
			&s.StartedAt, &s.EndedAt, &s.EndReason, &s.CreatedAt, &s.RankAbove, &s.RankBelow,
			&s.Usage.Tokens, &s.Usage.Window, &s.Usage.Launch, &s.Pressure, &s.Seq}
	},
	func(s store.Session) baton.WorkspaceID { return s.Workspace },
	"seq")

var sessionUpsertSQL = sessions.upsertSQL + " RETURNING seq"

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	s, err := get(t, sessions, string(id))
	if err == nil {
		t.seeSession(s)
	}
	return s, err
}

// seeSession remembers the Seq of s (that s exists).
func (t *tx) seeSession(s store.Session) {
	if t.sessionSeqs == nil {
		t.sessionSeqs = map[baton.SessionID]int64{}
	}
	t.sessionSeqs[s.ID] = s.Seq
}

// PutSession inserts s with the next Seq (an identity column, growing in
// insert order across the schema) or replaces it keeping its stored Seq;
// baton.ErrInvalid for an empty ID or Workspace.
func (t *tx) PutSession(s store.Session) error {
	if err := t.checkPut("PutSession", backend.Required(pkg, kindSession, "ID", s.ID), backend.Required(pkg, kindSession, "Workspace", s.Workspace)); err != nil {
		return err
	}
	if seq, ok := t.sessionSeqs[s.ID]; ok {
		s.Seq = seq
		t.queue(s.Workspace, sessions.updateSQL, sessions.args(s)...)
	} else {
		t.lock(s.Workspace)
		// Not seen here: write now, to learn its Seq for the change feed.
		if err := t.queryRow("put session", sessionUpsertSQL, sessions.args(s), &s.Seq); err != nil {
			return err
		}
		t.seeSession(s)
	}
	t.changes(s.Workspace, kindSession, string(s.ID), s)
	return nil
}

// ListSessions returns the sessions of ws in creation order.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	out, err := list(t, sessions, ws, "WHERE workspace = $1 ORDER BY seq", string(ws))
	for _, s := range out {
		t.seeSession(s)
	}
	return out, err
}

var handoffs = newTable(kindHandoff, "handoffs",
	[]string{"id", "workspace", "request_id", "fingerprint", "state", "attempt", "source_session", "target_session",
		"source_config", "target_config", "generate_summary", "native", "report", "report_path", "facts",
		"generation_token", "generation_deadline", "error", "stop_requested", "stop_unconfirmed", "history",
		"created_at", "updated_at", "share", "reason"},
	func(h *store.Handoff) []any {
		return []any{&h.ID, &h.Workspace, &h.RequestID, &h.Fingerprint, &h.State, &h.Attempt,
			&h.SourceSession, &h.TargetSession, &h.SourceConfig, &h.TargetConfig, &h.GenerateSummary, &h.Native,
			&h.Report, &h.ReportPath, &h.Facts, token{&h.GenerationToken}, &h.GenerationDeadline, &h.Error, &h.StopRequested,
			&h.StopUnconfirmed, &h.History, &h.CreatedAt, &h.UpdatedAt, &h.Share, &h.Reason}
	},
	func(h store.Handoff) baton.WorkspaceID { return h.Workspace })

// pendingSQL is the predicate of the handoffs_pending index: a query must
// spell it the same way for the planner to use the index.
const pendingSQL = "state NOT IN ('', 'completed', 'cancelled')"

// takeSlotSQL is the update of a handoff that becomes pending: it writes
// nothing when another handoff of the workspace holds the slot.
var takeSlotSQL = handoffs.updateSQL + " AND NOT EXISTS (SELECT 1 FROM handoffs o WHERE o.workspace = $2 AND o." +
	pendingSQL + " AND o.id <> $1)"

// wroteHandoff remembers h as the handoff's current value and adds it to
// the feed, with a History of their own (the caller may change its slice
// before the commit).
func (t *tx) wroteHandoff(h store.Handoff) {
	h.History = slices.Clone(h.History)
	remember(&t.cache.handoffs, h.ID, h, true)
	t.changes(h.Workspace, kindHandoff, string(h.ID), h)
}

// handoffList reads handoffs, under the lock of ws in an Update (none
// when ws is ""), and remembers those it may.
func (t *tx) handoffList(ws baton.WorkspaceID, rest string, args ...any) ([]store.Handoff, error) {
	hs, err := list(t, handoffs, ws, rest, args...)
	for _, h := range hs {
		if !t.update || t.locked[h.Workspace] { // one snapshot, or under the lock
			t.seeHandoff(h)
		}
	}
	return hs, err
}

// GetHandoff returns the handoff id; store.ErrNotFound if absent. In an
// Update it takes the lock of the handoff's workspace and reads ahead its
// workspace and reservation rows, in the same round trip.
func (t *tx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	if err := t.readable(); err != nil {
		return store.Handoff{}, err
	}
	if c, have := t.cache.handoffs[id]; have {
		if !c.ok {
			return store.Handoff{}, backend.NotFound(pkg, kindHandoff, id)
		}
		c.r.History = slices.Clone(c.r.History)
		return c.r, nil
	}
	h, found, err := getLocked(t, handoffs, string(id), func(b *pgx.Batch) {
		t.readAhead(b, "(SELECT workspace FROM handoffs WHERE id = $1)", string(id), "")
	})
	if err != nil {
		return store.Handoff{}, err
	}
	if !found {
		remember(&t.cache.handoffs, id, store.Handoff{}, false)
		return store.Handoff{}, backend.NotFound(pkg, kindHandoff, id)
	}
	if t.update {
		// The read-ahead ran for this workspace: rows it did not find
		// are absent.
		learn(&t.cache.workspaces, h.Workspace, store.Workspace{}, false)
		learn(&t.cache.reservations, h.Workspace, store.Reservation{}, false)
	}
	t.seeHandoff(h)
	return h, nil
}

// HandoffByRequest returns the handoff of (ws, requestID) through its
// unique index; store.ErrNotFound if there is none.
func (t *tx) HandoffByRequest(ws baton.WorkspaceID, requestID string) (store.Handoff, error) {
	hs, err := t.handoffList(ws, "WHERE workspace = $1 AND request_id = $2", string(ws), requestID)
	if err == nil && len(hs) == 0 {
		err = baton.Errorf(store.ErrNotFound, "pgstore: no handoff with request id %s in workspace %s", requestID, ws)
	}
	if err != nil {
		return store.Handoff{}, err
	}
	return hs[0], nil
}

// PendingHandoffs returns the handoff holding the pending slot of ws (none
// if the slot is free), or with ws == "" every pending handoff, from the
// partial index that holds only those: O(pending).
func (t *tx) PendingHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if ws != "" {
		return t.handoffList(ws, "WHERE workspace = $1 AND "+pendingSQL, string(ws))
	}
	return t.handoffList("", "WHERE "+pendingSQL+" ORDER BY workspace")
}

// ListHandoffs returns the handoffs of ws in insert order.
func (t *tx) ListHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	return t.handoffList(ws, "WHERE workspace = $1 ORDER BY ord", string(ws))
}

// PutHandoff inserts or replaces h. store.ErrDuplicate if (workspace,
// request id) is taken by another handoff, or if h is pending and another
// handoff holds the workspace's slot; baton.ErrInvalid for an empty ID,
// Workspace or RequestID, or if it changes the stored Workspace or
// RequestID. A handoff this transaction has not read is inserted now (one
// round trip); if a row refused it, the handoff is read and replaced, or
// refused. An update of a handoff already read in this transaction is
// queued, but for one that takes the pending slot, which needs the
// server's answer.
func (t *tx) PutHandoff(h store.Handoff) error {
	if err := t.checkPut("PutHandoff", backend.Required(pkg, kindHandoff, "ID", h.ID), backend.Required(pkg, kindHandoff, "Workspace", h.Workspace),
		backend.Required(pkg, kindHandoff, "RequestID", h.RequestID)); err != nil {
		return err
	}
	if c := t.cache.handoffs[h.ID]; !c.ok {
		n, err := t.exec(h.Workspace, "insert handoff", handoffs.insertSQL, handoffs.args(h)...)
		if err != nil {
			return err
		}
		if n == 1 {
			t.wroteHandoff(h)
			return nil
		}
		delete(t.cache.handoffs, h.ID) // read it, under its lock
	}
	cur, err := t.GetHandoff(h.ID) // from the cache if read or written here
	if errors.Is(err, store.ErrNotFound) {
		return baton.Errorf(store.ErrDuplicate, "pgstore: handoff %q: the request id %q in workspace %q, or the workspace's pending slot, is taken",
			h.ID, h.RequestID, h.Workspace)
	}
	if err != nil {
		return err
	}
	if h.Workspace != cur.Workspace || h.RequestID != cur.RequestID {
		return backend.KeysChanged(pkg, h, cur)
	}
	if h.State.Pending() && !cur.State.Pending() {
		n, err := t.exec(h.Workspace, "put handoff", takeSlotSQL, handoffs.args(h)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return baton.Errorf(store.ErrDuplicate, "pgstore: handoff %q: another handoff holds the pending slot of workspace %q",
				h.ID, h.Workspace)
		}
	} else if sql, args := handoffs.diff(cur, h); sql != "" {
		t.queue(h.Workspace, sql, args...)
	}
	t.wroteHandoff(h)
	return nil
}

var wakeups = newTable("wakeup", "wakeups",
	[]string{"id", "workspace", "session", "prompt", "at", "status", "reason", "created_at", "updated_at"},
	func(w *store.Wakeup) []any {
		return []any{&w.ID, &w.Workspace, &w.Session, &w.Prompt, &w.At, &w.Status, &w.Reason, &w.CreatedAt, &w.UpdatedAt}
	},
	func(w store.Wakeup) baton.WorkspaceID { return w.Workspace })

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	return get(t, wakeups, string(id))
}

// PutWakeup inserts or replaces w; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutWakeup(w store.Wakeup) error {
	return putChecked(t, wakeups, "PutWakeup", string(w.ID), w)
}

// ListWakeups returns the wakeups of ws ordered by (At, ID); with pinned
// != "" only those pinned to it, from the index by session.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if pinned == "" {
		return list(t, wakeups, ws, "WHERE workspace = $1 ORDER BY at, id", string(ws))
	}
	return list(t, wakeups, ws, "WHERE session = $2 AND workspace = $1 ORDER BY at, id", string(ws), string(pinned))
}

// DueWakeups returns the pending wakeups with At <= now ordered by (At,
// ID), at most limit (limit <= 0: all), from the index of pending wakeups.
func (t *tx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	if limit <= 0 {
		return list(t, wakeups, "", "WHERE status = 'pending' AND at <= $1 ORDER BY at, id", now)
	}
	return list(t, wakeups, "", "WHERE status = 'pending' AND at <= $1 ORDER BY at, id LIMIT $2", now, limit)
}

var continuations = newTable("continuation", "continuations",
	[]string{"id", "workspace", "session", "task", "ending", "prompt", "target", "automated", "state", "reason",
		"created_at", "updated_at"},
	func(c *store.Continuation) []any {
		return []any{&c.ID, &c.Workspace, &c.Session, &c.Task, &c.Ending, &c.Prompt, &c.Target, &c.Automated,
			&c.State, &c.Reason, &c.CreatedAt, &c.UpdatedAt}
	},
	func(c store.Continuation) baton.WorkspaceID { return c.Workspace })

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	return get(t, continuations, string(id))
}

// PutContinuation inserts or replaces c; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutContinuation(c store.Continuation) error {
	return putChecked(t, continuations, "PutContinuation", string(c.ID), c)
}

// QueuedContinuations returns the queued continuations of every workspace,
// oldest first, from the index of queued ones.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	return list(t, continuations, "", "WHERE state = 'queued' ORDER BY ord")
}

// ListContinuations returns the continuations of ws, oldest first.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	return list(t, continuations, ws, "WHERE workspace = $1 ORDER BY ord", string(ws))
}

var launches = newTable("launch", "launches",
	[]string{"id", "workspace", "session", "handoff", "attempt", "holder", "host", "engine", "epoch", "gone", "admitted",
		"end_reason", "created_at", "updated_at"},
	func(l *store.Launch) []any {
		return []any{&l.ID, &l.Workspace, &l.Session, &l.Handoff, &l.Attempt, &l.Holder, &l.Host, &l.Engine, &l.Epoch,
			&l.Gone, &l.Admitted, &l.EndReason, &l.CreatedAt, &l.UpdatedAt}
	},
	func(l store.Launch) baton.WorkspaceID { return l.Workspace })

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return get(t, launches, string(id))
}

// PutLaunch inserts or replaces l; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutLaunch(l store.Launch) error {
	return putChecked(t, launches, "PutLaunch", string(l.ID), l)
}

// LiveLaunches returns the live launches of every workspace (ws == "") or
// of ws, oldest first, from the partial indexes that hold only live ones.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	if ws == "" {
		return list(t, launches, "", "WHERE NOT gone ORDER BY ord")
	}
	return list(t, launches, ws, "WHERE workspace = $1 AND NOT gone ORDER BY ord", string(ws))
}

var instructions = newTable(kindInstruction, "instructions",
	[]string{"id", "workspace", "text", "state", "session", "created_at", "updated_at"},
	func(i *store.Instruction) []any {
		return []any{&i.ID, &i.Workspace, &i.Text, &i.State, &i.Session, &i.CreatedAt, &i.UpdatedAt}
	},
	func(i store.Instruction) baton.WorkspaceID { return i.Workspace })

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return get(t, instructions, string(id))
}

// PutInstruction inserts or replaces i; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutInstruction(i store.Instruction) error {
	if err := putChecked(t, instructions, "PutInstruction", string(i.ID), i); err != nil {
		return err
	}
	t.changes(i.Workspace, kindInstruction, string(i.ID), i)
	return nil
}

// ListInstructions returns the instructions of ws, oldest first.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return list(t, instructions, ws, "WHERE workspace = $1 ORDER BY ord", string(ws))
}

// OpenInstructions returns the pending and unknown instructions of ws,
// oldest first, from the partial index that holds only those
// (instructions_open).
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return list(t, instructions, ws, "WHERE workspace = $1 AND "+openInstructionSQL+" ORDER BY ord", string(ws))
}

// openInstructionSQL is the predicate of the index instructions_open: the
// query repeats it for the planner to use the index.
const openInstructionSQL = "state IN ('pending', 'unknown')"
