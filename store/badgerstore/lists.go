package badgerstore

import (
	"bytes"
	"fmt"

	"github.com/dgraph-io/badger/v4"
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
func (l list) prefix() key {
	k := newKey(l.table)
	if l.global {
		return k
	}
	return k.str(l.owner)
}

// guard returns the phantom guard of l: one key per list. Every write that
// adds a key to the list or removes one also writes the guard; every list
// read inside an Update enters the guard into the read set. badger detects
// conflicts on keys read, not on ranges: a scan does not conflict with a
// later insert into the scanned prefix. The guard turns that insert into a
// write of a key the scan read, so the scanning transaction conflicts and
// re-runs: list reads are serializable too. Writers only write the guard
// (they do not read it), so two writers of one list do not conflict
// through it.
func (l list) guard() key {
	k := append(newKey(tGuard), l.table)
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
	has := func(in []index, k key) bool {
		for _, e := range in {
			if string(e.key) == string(k) {
				return true
			}
		}
		return false
	}
	for _, e := range old {
		if has(new, e.key) {
			continue
		}
		if err := t.del(e.key); err != nil {
			return err
		}
		if err := t.touch(e.list); err != nil {
			return err
		}
	}
	for _, e := range new {
		if has(old, e.key) {
			continue
		}
		if err := t.set(e.key, []byte(e.id)); err != nil {
			return err
		}
		if err := t.touch(e.list); err != nil {
			return err
		}
	}
	return nil
}

// scan visits the entries of l in key order until visit returns false. In an Update it first enters the
// guard of l into the read set (see list.guard); every entry visited is in
// the read set too. The iterator is closed before scan returns, so no
// iterator is ever open when the transaction ends (badger panics then).
func (t *tx) scan(l list, visit func(k, v []byte) bool) error {
	prefix := l.prefix()
	if t.track {
		// Every change to the list writes its guard: a list read whose
		// guard is not dirty read only durable entries.
		t.reads = append(t.reads, l.guard())
	}
	it := t.txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	if t.update {
		// Seek enters its key into the read set, also a key this
		// transaction wrote itself (a Get of one would be served from the
		// transaction's own writes and leave no trace).
		it.Seek(l.guard())
	}
	for it.Seek(prefix); it.Valid(); it.Next() {
		if err := t.ctx.Err(); err != nil {
			return fmt.Errorf("badgerstore: %w", err)
		}
		item := it.Item()
		var more bool
		if err := item.Value(func(v []byte) error { more = visit(item.Key(), v); return nil }); err != nil {
			return storageErr(fmt.Sprintf("scan (key %q)", item.KeyCopy(nil)), err)
		}
		if !more {
			break
		}
	}
	return nil
}

// ids returns the ids the entries of l point to, in key order, at most
// limit of them (limit <= 0: all), stopping at the first entry whose key is
// above stop (nil: no bound).
func (t *tx) ids(l list, stop key, limit int) ([]string, error) {
	var out []string
	err := t.scan(l, func(k, v []byte) bool {
		if stop != nil && bytes.Compare(k[:min(len(k), len(stop))], stop) > 0 {
			return false
		}
		out = append(out, string(v))
		return limit <= 0 || len(out) < limit
	})
	return out, err
}

// listed returns, after the readable check, the records the entries of l
// point to (as ids lists them), read with load.
func listed[W any, R any](t *tx, l list, stop key, limit int, keyOf func(string) key, record func(W) R) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	ids, err := t.ids(l, stop, limit)
	if err != nil {
		return nil, err
	}
	return load(t, ids, keyOf, record)
}

// load reads the record of each id with get, failing if one is missing
// (an index entry without its record is corruption).
func load[W any, R any](t *tx, ids []string, keyOf func(string) key, record func(W) R) ([]R, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]R, 0, len(ids))
	for _, id := range ids {
		w, found, err := getValue[W](t, keyOf(id))
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, storageErr("load", fmt.Errorf("index entry points to missing record %q (key %q)", id, []byte(keyOf(id))))
		}
		out = append(out, record(w))
	}
	return out, nil
}
