package badgerstore

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
)

// list names one ordered list of index keys: a table, and the owner (a
// workspace or session id) unless the list spans the table.
type list struct {
	table  byte
	owner  string
	global bool
}

func ownedList(table byte, owner string) list { return list{table: table, owner: owner} }

func globalList(table byte) list { return list{table: table, global: true} }

// prefix is the key prefix every entry of l starts with.
func (l list) prefix() key { return l.owned(newKey(l.table)) }

// guard returns the phantom guard of l: one key per list. Every write that
// adds a key to the list or removes one also writes the guard; every list
// read inside an Update enters the guard into the read set. badger detects
// conflicts on keys read, not on ranges: a scan does not conflict with a
// later insert into the scanned prefix. The guard turns that insert into a
// write of a key the scan read, so the scanning transaction conflicts and
// re-runs: list reads are serializable too. Writers only write the guard
// (they do not read it), so two writers of one list do not conflict
// through it.
func (l list) guard() key { return l.owned(append(newKey(tGuard), l.table)) }

// owned appends l's owner to k, unless l spans its table.
func (l list) owned(k key) key {
	if l.global {
		return k
	}
	return k.str(l.owner)
}

// index is one entry of a list: its key (the list's prefix and the entry's
// ordering components) and the id of the record it points to.
type index struct {
	list list
	key  key
	id   string
}

// seqIndex is the entry of the record id in the list table of workspace
// ws, by its insert number seq.
func seqIndex[K ~string](table byte, ws baton.WorkspaceID, seq uint64, id K) index {
	l := ownedList(table, string(ws))
	return index{l, l.prefix().u64(seq).str(string(id)), string(id)}
}

// touch writes the guard of l, once per transaction.
func (t *tx) touch(l list) error {
	g := l.guard()
	if _, ok := t.guards[string(g)]; ok {
		return nil
	}
	if t.guards == nil {
		t.guards = map[string]struct{}{}
	}
	t.guards[string(g)] = struct{}{}
	return t.set(g, nil)
}

// reindex moves a record's index entries from old to new: entries in both
// (same key) stay untouched, the others are deleted or written, and the
// guard of every list that changed is written.
func (t *tx) reindex(old, new []index) error {
	for _, e := range old {
		if err := t.moveIndex(e, new, false); err != nil {
			return err
		}
	}
	for _, e := range new {
		if err := t.moveIndex(e, old, true); err != nil {
			return err
		}
	}
	return nil
}

// moveIndex writes entry e (in true) or deletes it, and the guard of its
// list, unless others has an entry with its key.
func (t *tx) moveIndex(e index, others []index, in bool) error {
	if slices.ContainsFunc(others, func(o index) bool { return string(o.key) == string(e.key) }) {
		return nil
	}
	var err error
	if in {
		err = t.set(e.key, []byte(e.id))
	} else {
		err = t.del(e.key)
	}
	if err != nil {
		return err
	}
	return t.touch(e.list)
}

// scan visits the entries of l in key order until visit returns false or
// fails. In an Update it first enters the guard of l into the read set
// (see list.guard); every entry visited is in the read set too.
func (t *tx) scan(l list, visit func(k, v []byte) (bool, error)) error {
	var guard key
	if t.track || t.update {
		guard = l.guard()
	}
	if t.track {
		// Every change to the list writes its guard: a list read whose
		// guard is not dirty read only durable entries.
		t.reads = append(t.reads, guard)
	}
	prefix := l.prefix()
	return t.each(prefix, prefix, guard, visit)
}

// each visits the entries under prefix, from the first at or after from,
// in key order until visit returns false or fails (a failure is an
// ErrStorage naming the key). In an Update, a guard (non-nil) is first
// sought, which enters it into the read set, also a key this transaction
// wrote itself (a Get of one would be served from the transaction's own
// writes and leave no trace). The iterator is closed before each returns,
// so no iterator is ever open when the transaction ends (badger panics
// then).
func (t *tx) each(prefix, from, guard key, visit func(k, v []byte) (bool, error)) error {
	it := t.txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	if t.update && guard != nil {
		it.Seek(guard)
	}
	for it.Seek(from); it.Valid(); it.Next() {
		if err := t.ctx.Err(); err != nil {
			return fmt.Errorf("badgerstore: %w", err)
		}
		item := it.Item()
		more := false
		if err := item.Value(func(v []byte) (err error) { more, err = visit(item.Key(), v); return err }); err != nil {
			return keyed(err, item.KeyCopy(nil))
		}
		if !more {
			break
		}
	}
	return nil
}

// listed returns, after the readable check, the records the entries of l
// point to, in key order, at most limit of them (limit <= 0: all),
// stopping at the first entry whose key is above stop (nil: no bound).
func listed[W any, R any](t *tx, l list, stop key, limit int, table byte, record func(W) R) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var ids []string
	err := t.scan(l, func(k, v []byte) (bool, error) {
		if stop != nil && bytes.Compare(k[:min(len(k), len(stop))], stop) > 0 {
			return false, nil
		}
		ids = append(ids, string(v))
		return limit <= 0 || len(ids) < limit, nil
	})
	if err != nil {
		return nil, err
	}
	return load(t, ids, table, record)
}

// load reads the record of each id from table, failing if one is missing
// (an index entry without its record is corruption).
func load[W any, R any](t *tx, ids []string, table byte, record func(W) R) ([]R, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]R, 0, len(ids))
	for _, id := range ids {
		k := recordKey(table, id)
		w, found, err := getValue[W](t, k)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, storageErr("load", fmt.Errorf("index entry points to missing record %q (key %q)", id, []byte(k)))
		}
		out = append(out, record(w))
	}
	return out, nil
}
