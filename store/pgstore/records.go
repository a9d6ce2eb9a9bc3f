package pgstore

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// table describes how one record kind maps onto its table: cols are the
// columns in the order args writes them, id first; scan reads them
// followed by the read-only columns (set by the server).
type table[R any] struct {
	kind string // "workspace", ...: for errors and the seen set
	name string
	cols []string
	scan func(pgx.Row) (R, error)
	args func(R) []any

	selectSQL string // SELECT cols FROM name (no WHERE)
	getSQL    string // ... WHERE <key> = $1 (the key is the first column)
	insertSQL string // INSERT ... ON CONFLICT DO NOTHING
	updateSQL string // UPDATE ... SET every column but the key WHERE <key> = $1

	// The tables of the rows the Store caches (rowcache.go) have a
	// version column, which selectSQL reads last: scanV reads a row with
	// its version; returning ends a write that returns the version it
	// wrote; asRead returns a row written as a read of it returns it
	// (rowcache.go), false if it cannot tell.
	scanV     func(pgx.Row) (R, int64, error)
	returning string
	asRead    func(R) (R, bool)
	// checkedSQL is updateSQL with returning, checked: it writes only at
	// the version given as one more argument, and raises SQLSTATE BT001
	// otherwise (see checkedSQL).
	checkedSQL string
	// updates holds, by the mask of the columns they set, the updates
	// diff returns (*partialUpdate).
	updates sync.Map
}

// partialUpdate is the update of some columns of a versioned row, with
// returning, and its checked form (see checkedSQL).
type partialUpdate struct {
	sql, checked string
}

// newVersionedTable is newTable for a table with a version column.
func newVersionedTable[R any](kind, name string, cols []string, scanV func(pgx.Row) (R, int64, error), args func(R) []any,
	asRead func(R) (R, bool)) *table[R] {
	scan := func(row pgx.Row) (R, error) {
		r, _, err := scanV(row)
		return r, err
	}
	t := newTable(kind, name, cols, scan, args, "version")
	t.scanV, t.asRead = scanV, asRead
	t.returning = " RETURNING version"
	// The update draws the row's next version itself: the update trigger
	// (migration 0005) then does not fire.
	set, where, _ := strings.Cut(t.updateSQL, " WHERE ")
	t.updateSQL = set + ", " + nextVersion + " WHERE " + where
	t.checkedSQL = t.updateSQL + checkedSQL(kind, len(cols)+1) + t.returning
	return t
}

// diff returns the update of a versioned row from old, its value as the
// transaction knows it, to r that sets only the columns whose values
// differ (and the version), returning the version, its checked form
// (with the version as one more argument), and its arguments. Leaving a
// column out writes what the full update would: the stored value is a
// function of the Go value, and old is what the row holds, as read or as
// this transaction wrote it. Most transitions change a few fields of a
// handoff; the full update would send, and the server parse, every one,
// its JSON columns included.
func (tb *table[R]) diff(old, r R) (sql, checked string, args []any) {
	was, now := tb.args(old), tb.args(r)
	args = append(make([]any, 0, len(now)), now[0])
	var mask uint64
	for i := 1; i < len(now); i++ {
		if !sameArg(was[i], now[i]) {
			mask |= 1 << i
			args = append(args, now[i])
		}
	}
	if u, ok := tb.updates.Load(mask); ok {
		p := u.(*partialUpdate)
		return p.sql, p.checked, args
	}
	sets := make([]string, 0, len(args))
	for i, n := 1, 2; i < len(tb.cols); i++ {
		if mask&(1<<i) != 0 {
			sets = append(sets, tb.cols[i]+" = $"+strconv.Itoa(n))
			n++
		}
	}
	base := "UPDATE " + tb.name + " SET " + strings.Join(append(sets, nextVersion), ", ") + " WHERE " + tb.cols[0] + " = $1"
	p := &partialUpdate{sql: base + tb.returning, checked: base + checkedSQL(tb.kind, len(args)+1) + tb.returning}
	tb.updates.Store(mask, p)
	return p.sql, p.checked, args
}

// sameArg reports whether two arguments of a column write the same
// value: false when it cannot tell. Times compare as stored, to the
// microsecond.
func sameArg(a, b any) bool {
	switch x := a.(type) {
	case string, bool, int, int64, baton.EngineConfig:
		return a == b // comparable: false for another dynamic type
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Truncate(time.Microsecond).Equal(y.Truncate(time.Microsecond))
	}
	return false
}

// nextVersion is the SET clause of a write of a versioned row.
const nextVersion = "version = nextval('row_versions')"

// checkedSQL is the condition that makes a write of the row keyed $1
// (an UPDATE ... WHERE <key> = $1) its check too: it matches the row at
// version $n, and raises SQLSTATE BT001 (stale_row, migration 0004) when
// the row has another version, which aborts the transaction. (CASE
// evaluates its branches in order: stale_row is called only for a row of
// another version.)
func checkedSQL(kind string, n int) string {
	v := "$" + strconv.Itoa(n)
	return " AND CASE WHEN version = " + v + " THEN true ELSE stale_row('" + kind + "', $1, " + v + ") IS NULL END"
}

// written returns what reads the version a write of r returned, and
// makes the row for the row cache: r as a read returns it, or no value
// (the cache drops the row) if asRead cannot tell. It takes r as it is
// now: the caller may change r's slices before the write is sent.
func written[R any](tb *table[R], r R) func(pgx.Row) (cachedRow, error) {
	var value any
	if v, ok := tb.asRead(r); ok {
		value = v
	}
	return func(row pgx.Row) (cachedRow, error) {
		c := cachedRow{value: value}
		return c, row.Scan(&c.version)
	}
}

func newTable[R any](kind, name string, cols []string, scan func(pgx.Row) (R, error), args func(R) []any, readOnly ...string) *table[R] {
	t := &table[R]{kind: kind, name: name, cols: cols, scan: scan, args: args}
	list := strings.Join(cols, ", ")
	t.selectSQL = "SELECT " + strings.Join(append(slices.Clone(cols), readOnly...), ", ") + " FROM " + name
	t.getSQL = t.selectSQL + " WHERE " + cols[0] + " = $1"
	params := make([]string, len(cols))
	sets := make([]string, 0, len(cols)-1)
	for i, c := range cols {
		params[i] = "$" + strconv.Itoa(i+1)
		if i > 0 {
			sets = append(sets, c+" = "+params[i])
		}
	}
	t.insertSQL = "INSERT INTO " + name + " (" + list + ") VALUES (" + strings.Join(params, ", ") + ") ON CONFLICT DO NOTHING"
	t.updateSQL = "UPDATE " + name + " SET " + strings.Join(sets, ", ") + " WHERE " + cols[0] + " = $1"
	return t
}

// get reads the record id; store.ErrNotFound if absent.
func get[R any](t *tx, tb *table[R], id string) (R, error) {
	var r R
	if err := t.readable(); err != nil {
		return r, err
	}
	found, err := t.queryRow("get "+tb.kind, tb.getSQL, []any{id}, func(row pgx.Row) error {
		var err error
		r, err = tb.scan(row)
		return err
	})
	if err != nil {
		return r, err
	}
	if !found {
		return r, notFound(tb.kind, id)
	}
	t.see(tb.kind, id)
	return r, nil
}

// list runs a query of tb's columns (where and order appended to its
// SELECT) and returns the records.
func list[R any](t *tx, tb *table[R], rest string, args ...any) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
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

// insert adds r; store.ErrDuplicate if a uniqueness rule refuses it.
func insert[R any](t *tx, tb *table[R], id string, r R) error {
	var n int64
	var err error
	if tb.scanV != nil {
		n, err = t.execRow("insert "+tb.kind, recordKey{tb.kind, id}, written(tb, r), tb.insertSQL+tb.returning, tb.args(r)...)
	} else {
		n, err = t.exec("insert "+tb.kind, tb.insertSQL, tb.args(r)...)
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return duplicate(tb.kind, id)
	}
	t.see(tb.kind, id)
	return nil
}

// put replaces the record id with r; store.ErrNotFound if absent. A
// record this transaction has seen is queued (its row exists); another is
// written now, to learn whether it exists.
func put[R any](t *tx, tb *table[R], id string, r R) error {
	k, versioned := recordKey{tb.kind, id}, tb.scanV != nil
	// A versioned table's written row, returned, goes to the
	// transaction's rows for the cache.
	if t.known(tb.kind, id) {
		if versioned {
			t.queueChecked(k, written(tb, r), tb.updateSQL+tb.returning, tb.checkedSQL, tb.args(r)...)
		} else {
			t.queue(tb.updateSQL, tb.args(r)...)
		}
		return nil
	}
	var n int64
	var err error
	if versioned {
		n, err = t.execRow("put "+tb.kind, k, written(tb, r), tb.updateSQL+tb.returning, tb.args(r)...)
	} else {
		n, err = t.exec("put "+tb.kind, tb.updateSQL, tb.args(r)...)
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound(tb.kind, id)
	}
	t.see(tb.kind, id)
	return nil
}

// tokenHash converts a scanned bytea back into a TokenHash.
func tokenHash(b []byte) (baton.TokenHash, error) {
	var h baton.TokenHash
	if len(b) != 0 && len(b) != len(h) {
		return h, fmt.Errorf("%w: a token hash of %d bytes", ErrDatabase, len(b))
	}
	copy(h[:], b)
	return h, nil
}

// Record kinds, also the change feed's kinds where they have one.
const (
	kindWorkspace    = "workspace"
	kindSession      = string(store.ChangeSession)
	kindHandoff      = string(store.ChangeHandoff)
	kindInstruction  = string(store.ChangeInstruction)
	kindReservation  = "reservation"
	kindWakeup       = "wakeup"
	kindContinuation = "continuation"
	kindLaunch       = "launch"
	// kindFeed keys a workspace's last change Seq in the row cache.
	kindFeed = "feed"
)
