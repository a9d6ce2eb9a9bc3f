package pgstore

import (
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
