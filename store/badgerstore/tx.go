package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// tx is a store.Tx over one badger transaction. Every read returns the
// caller's own copy of a record (Handoff.History included), also of what
// the transaction itself wrote: records are decoded, or copied from the
// store's cache of decoded records (see recordCache).
type tx struct {
	txn    *badger.Txn
	ctx    context.Context
	update bool
	done   bool
	// guards written in this transaction (written once each).
	guards map[string]struct{}
	// broken is the first failed write: a record may then be written
	// without its index entries, so the transaction must not commit even
	// if fn ignores the error (see Store.run).
	broken error
	// changes are the feed entries written at commit (see flushChanges).
	changes pendingChanges
	// wrote is set by the first write: only then is there a commit.
	wrote bool
	// bigValue is set by a write that badger may put in its value log
	// (threshold: the store's; 0 when it does not matter).
	bigValue  bool
	threshold int
	// cache is the store's cache of decoded records; fresh
	// are the records written, for the cache once the transaction
	// commits.
	cache *recordCache
	fresh []freshRecord
	// local holds, by key, the stored form of every record this
	// transaction read or wrote (see getValue): a record read again in the
	// same transaction (an index update reading the row it replaces, a
	// helper reading the workspace its caller read) costs no badger
	// lookup and no copy from the shared cache.
	local []keptRecord
	// track says to note the keys read and written (with group commit:
	// see groupSync.settle).
	track         bool
	reads, writes []key
	// readBuf and writeBuf back reads and writes up to a transfer's
	// transaction's size, in the same allocation as the tx.
	readBuf  [16]key
	writeBuf [32]key
}

var _ store.Tx = (*tx)(nil)

// readable returns store.ErrTxDone once fn has returned, and the context's error
// once it is done: a Tx carries the context of its Update or View.
func (t *tx) readable() error {
	if t.done {
		return store.ErrTxDone
	}
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("badgerstore: %w", err)
	}
	return nil
}

// getValue returns the record under k, decoded from its JSON into a V
// (or taken from the store's cache of decoded records, when it holds the
// same JSON); found is false if there is none. In an Update the key
// enters the read set, found or not.
func getValue[V any](t *tx, k key) (v V, found bool, err error) {
	if lv, ok := t.kept(k); ok {
		if v, ok := lv.(V); ok {
			// Read or written by this transaction: a read again is in its
			// read set already, or returns its own write (which badger
			// does not track either).
			return v, true, nil
		}
	}
	// boxed is v as the caches hold it: boxed once, shared by both.
	var boxed any
	found, err = t.read(k, func(b []byte) error {
		if c, ok := t.cache.get(k, b); ok {
			if cv, ok := c.(V); ok {
				v, boxed = cv, c
				return nil
			}
		}
		if err := decode(b, &v); err != nil {
			return err
		}
		boxed = v
		t.cache.put(k, bytes.Clone(b), boxed)
		return nil
	})
	if !found || err != nil {
		return *new(V), false, err
	}
	t.keep(k, boxed)
	return v, true, nil
}

// getRecord is the body of the typed getters: after the readable check it
// returns the record under k, converted from its stored form V;
// store.ErrNotFound (naming kind and id) if there is none. In an Update
// the key enters the read set.
func getRecord[V interface{ record() R }, R any, K ~string](t *tx, k key, kind string, id K) (R, error) {
	if err := t.readable(); err != nil {
		return *new(R), err
	}
	v, found, err := getValue[V](t, k)
	if err == nil && !found {
		err = backend.NotFound(pkg, kind, id)
	}
	if err != nil {
		return *new(R), err
	}
	return v.record(), nil
}

// decode unmarshals a stored value; a failure is an ErrStorage.
func decode(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return storageErr("decode", err)
	}
	return nil
}

// read runs use on the value under k (in an Update the key enters the
// read set, found or not); found is false, and use is not run, if there
// is none. A failure of badger or of use is an ErrStorage naming k.
func (t *tx) read(k key, use func(b []byte) error) (found bool, err error) {
	if t.track {
		t.reads = append(t.reads, k)
	}
	item, err := t.txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err == nil {
		err = item.Value(use)
	}
	if err != nil {
		return false, keyed(err, k)
	}
	return true, nil
}

// keyed returns err, a failure to read the value under k or to decode
// it, as an ErrStorage naming k.
func keyed(err error, k []byte) error {
	if !errors.Is(err, ErrStorage) {
		err = storageErr("read", err)
	}
	return fmt.Errorf("%w (key %q)", err, k)
}

// getString returns the value under k, the id of a record, as a string
// ("" if absent; an empty value is corruption).
func (t *tx) getString(k key) (id string, err error) {
	_, err = t.read(k, func(b []byte) error {
		if len(b) == 0 {
			return errors.New("empty value") // every pointer names a record
		}
		id = string(b)
		return nil
	})
	return id, err
}

// encode returns v as JSON. Writers encode before their first write, so
// that a record that cannot be stored is refused without a side effect.
func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a time outside the years 0-9999 fails to encode.
		return nil, baton.Errorf(baton.ErrInvalid, "badgerstore: encode: %v", err)
	}
	return b, nil
}

// keptRecord is a record a transaction read or wrote (see tx.local).
type keptRecord struct {
	k key
	v any
}

// maxKept bounds tx.local: a transfer's transaction touches a few
// records, and a slice searched in full is cheaper than a map for them;
// a transaction that reads a long list keeps only the first ones.
const maxKept = 32

// keptAt returns the index of k in t.local, or -1.
func (t *tx) keptAt(k key) int {
	return slices.IndexFunc(t.local, func(r keptRecord) bool { return string(r.k) == string(k) })
}

// keep notes v as the record under k for the rest of the transaction.
func (t *tx) keep(k key, v any) {
	if i := t.keptAt(k); i >= 0 {
		t.local[i].v = v
	} else if len(t.local) < maxKept {
		t.local = append(t.local, keptRecord{k, v})
	}
}

// kept returns the record kept under k, if any.
func (t *tx) kept(k key) (any, bool) {
	if i := t.keptAt(k); i >= 0 {
		return t.local[i].v, true
	}
	return nil, false
}

// forget drops what was kept under k (a raw write or a delete of k).
func (t *tx) forget(k key) {
	if i := t.keptAt(k); i >= 0 {
		t.local = slices.Delete(t.local, i, i+1)
	}
}

func (t *tx) set(k key, v []byte) error {
	if t.threshold > 0 && len(k)+len(v) >= t.threshold/2 {
		t.bigValue = true // conservative: badger compares the value alone
	}
	return t.write(k, "write", func() error { return t.txn.Set(k, v) })
}

func (t *tx) del(k key) error {
	return t.write(k, "delete", func() error { return t.txn.Delete(k) })
}

// write runs op, a write of k to the badger transaction (set or del): a
// failure breaks the transaction.
func (t *tx) write(k key, what string, op func() error) error {
	if t.broken != nil {
		return t.broken
	}
	t.forget(k)
	t.wrote = true
	if t.track {
		t.writes = append(t.writes, k)
	}
	if err := op(); err != nil {
		t.broken = storageErr(what, err)
		return t.broken
	}
	return nil
}

// put encodes v and writes it under k (a refused encoding writes nothing).
// Once the transaction commits, v enters the store's cache of decoded
// records.
func (t *tx) put(k key, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	return t.setRecord(k, b, v)
}

// setRecord writes b, the encoding of record v, under k; if the
// transaction commits, v enters the store's cache of decoded records.
func (t *tx) setRecord(k key, b []byte, v any) error {
	if err := t.set(k, b); err != nil {
		return err
	}
	if !roundTrips(b) {
		return nil // a read decodes b to another record than v
	}
	t.keep(k, v)
	t.fresh = append(t.fresh, freshRecord{k, b, v})
	return nil
}

// freshRecord is a record a transaction wrote: its key, its encoding and
// its stored form.
type freshRecord struct {
	k key
	b []byte
	v any
}

// cacheWritten puts the records the committed transaction wrote into the
// cache of decoded records.
func (t *tx) cacheWritten() {
	for _, r := range t.fresh {
		t.cache.put(r.k, r.b, r.v)
	}
}

// current begins a Put: it checks the transaction and the record's keys
// (errs) and returns the stored form of the record under k; found is false
// for a new record. The read enters the read set, found or not, so of two
// concurrent inserts of one id the second to commit conflicts.
func current[V any](t *tx, op string, k key, errs ...error) (V, bool, error) {
	if err := backend.Writable(t.readable(), t.update, pkg, op, errs...); err != nil {
		return *new(V), false, err
	}
	return getValue[V](t, k)
}

// currentSeq is current for a record listed in insert order: it also
// returns the record's insert number, the stored one or, for a new record,
// the next of kind in ws, which putRecord takes once the record is known
// to encode.
func currentSeq[V interface{ insertSeq() uint64 }](t *tx, op string, k key, kind byte, ws baton.WorkspaceID,
	errs ...error) (V, bool, uint64, error) {
	cur, found, err := current[V](t, op, k, errs...)
	if err != nil || found {
		return cur, found, cur.insertSeq(), err
	}
	seq, err := t.peekSeq(kind, ws)
	return cur, false, seq, err
}

// putRecord ends a Put of v, the stored form of a record of workspace ws
// under k (cur is the stored one, if found), once v is known to encode:
// it takes the insert number seq of counter kind for a new record (kind
// 0: a record not listed in insert order), writes v, moves the record's
// index entries from indexes(cur) to indexes(v), runs the further steps
// more, and notes the change for ws's feed, with v under the field feed of
// store.Change ("": a record the feed does not carry).
func putRecord[V any](t *tx, k key, v, cur V, found bool, kind byte, ws baton.WorkspaceID, seq uint64,
	indexes func(V) []index, feed string, more ...func() error) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	var old []index
	if found {
		old = indexes(cur)
	} else if kind != 0 {
		if err := t.takeSeq(kind, ws, seq); err != nil {
			return err
		}
	}
	if err := t.setRecord(k, b, v); err != nil {
		return err
	}
	if err := t.reindex(old, indexes(v)); err != nil {
		return err
	}
	// A failed write has already marked the transaction broken.
	for _, step := range more {
		if err := step(); err != nil {
			return err
		}
	}
	if feed != "" {
		t.recordChange(ws, feed, k, b)
	}
	return nil
}

// peekSeq returns the next insert number of kind in ws (the first is 1);
// takeSeq stores it as taken. Reading the counter orders concurrent inserts
// into one workspace: the second to commit conflicts and re-runs.
func (t *tx) peekSeq(kind byte, ws baton.WorkspaceID) (next uint64, err error) {
	next = 1
	_, err = t.read(counterKey(kind, ws), func(b []byte) error {
		if len(b) != 8 {
			return fmt.Errorf("counter of %d bytes", len(b))
		}
		next = binary.BigEndian.Uint64(b) + 1
		return nil
	})
	return next, err
}

func (t *tx) takeSeq(kind byte, ws baton.WorkspaceID, n uint64) error {
	return t.set(counterKey(kind, ws), binary.BigEndian.AppendUint64(nil, n))
}

// storageErr wraps a badger failure (or undecodable data) so that it
// matches ErrStorage and still unwraps to badger's error.
func storageErr(op string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrStorage, op, err)
}
