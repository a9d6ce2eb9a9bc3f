package badgerstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// wsSet describes a per-workspace set: one value per workspace (key: the
// set's table and the workspace) listing, by insert number, the records of
// a kind that are in a given state, which reads it instead of a list of
// keys (see the key layout in keys.go). Every write of such a record
// updates the set in the same transaction (tx.moveMember), and Open
// brings the sets up to date with records a baton that predates them
// wrote (syncSet).
type wsSet struct {
	name    string // in logs and errors
	table   byte   // the table of the sets
	records byte   // the table of the records
	// mark is the key, outside the versioned key space, of the badger
	// version up to which the sets are known to follow the records: one
	// per set, so that a set added later is backfilled in a directory
	// whose other sets are up to date.
	mark []byte
	// legacy is the table of the per-workspace lists of keys the set
	// replaced (0: none), laid out as "legacy ws seq id": the backfill
	// deletes their entries.
	legacy byte
	// member decodes a record of the records table.
	member func(b []byte) (member, error)
}

// member is what a wsSet reads of a record: its workspace, insert number
// and id, and whether it belongs in the set.
type member struct {
	ws  baton.WorkspaceID
	seq uint64
	id  string
	in  bool
}

// decodeMember decodes a record as W and returns its member.
func decodeMember[W interface{ member() member }](b []byte) (member, error) {
	var w W
	err := decode(b, &w)
	return w.member(), err
}

func (i instructionV1) member() member {
	return member{i.Workspace, i.Seq, string(i.ID), i.State.Open()}
}

func (l launchV1) member() member {
	return member{l.Workspace, l.Seq, string(l.ID), l.State == store.LaunchLive}
}

var (
	// openInstructions are the pending and unknown instructions of each
	// workspace (OpenInstructions).
	openInstructions = &wsSet{name: "open instructions", table: tOpenInstr, records: tInstruction,
		mark: openIndexKey, member: decodeMember[instructionV1]}
	// liveLaunches are the live launches of each workspace
	// (LiveLaunches(ws)); they replaced the lists of table tLiveByWS.
	liveLaunches = &wsSet{name: "live launches", table: tLiveSet, records: tLaunch,
		mark: liveIndexKey, legacy: tLiveByWS, member: decodeMember[launchV1]}
	// wsSets are all the per-workspace sets, which Open backfills where
	// they may not follow their records (syncSet).
	wsSets = []*wsSet{openInstructions, liveLaunches}
)

// key returns the key of the set of ws.
func (s *wsSet) key(ws baton.WorkspaceID) key { return newKey(s.table).str(string(ws)) }

// syncSets brings every per-workspace set up to date (see syncSet), on
// Open, before any transaction runs; v1 says the directory is format 1.
func syncSets(db *badger.DB, log *zap.Logger, v1 bool) error {
	for _, s := range wsSets {
		if err := syncSet(db, log, s, v1); err != nil {
			return err
		}
	}
	return nil
}

// syncSet builds the sets of s from their records where they may not
// follow them: in a format 1 directory (v1), written by a baton that
// predates the sets, and in any directory without the set's marker (a set
// added by a later version). In a format 2 directory whose marker is
// there, every record was written together with its sets, and syncSet
// reads nothing.
//
// s.mark holds a badger version up to which the sets are known to follow
// the records. syncSet reads, on one snapshot, only the records whose
// latest version is above it (all of them when the marker is absent;
// badger skips the tables older than the marker whole), adds each member
// to its workspace's set and removes each other record, and writes the
// sets that changed. It also deletes the entries of the lists the set
// replaced (s.legacy) written since the marker. The writes go in batches
// (a badger transaction has a size limit), each synced before the next,
// and the marker, set to the snapshot's version, goes last: a crash in
// between leaves the marker as it was, and the next Open does it again
// (adding an entry that is there, removing one that is not or deleting a
// deleted key changes nothing). An Open that crashes after the markers
// but before the directory became format 2 leaves format 1 and the
// markers, and the next Open reads only what was written since them.
//
// A record that does not decode is skipped, with a warning: every read of
// it fails with ErrStorage anyway, and it must not keep the store closed.
// A set that does not decode is an ErrStorage.
func syncSet(db *badger.DB, log *zap.Logger, s *wsSet, v1 bool) error {
	snap := db.NewTransaction(false)
	defer snap.Discard()
	since, found, err := setMark(snap, s)
	if err != nil || (found && !v1) {
		return err
	}
	sets := map[baton.WorkspaceID][]setEntry{}
	changed := map[baton.WorkspaceID]bool{}
	var order []baton.WorkspaceID // the sets changed, in the order met
	scanned := 0
	var stale []key // entries of the legacy lists
	err = func() error {
		it := snap.NewIterator(badger.IteratorOptions{Prefix: newKey(s.records), SinceTs: since, PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			scanned++
			var m member
			if err := item.Value(func(b []byte) (derr error) { m, derr = s.member(b); return derr }); err != nil {
				log.Warn("badgerstore: "+s.name+": skipping a record", zap.ByteString("key", item.KeyCopy(nil)), zap.Error(err))
				continue
			}
			if m.id == "" || m.ws == "" {
				log.Warn("badgerstore: "+s.name+": skipping a record without id or workspace", zap.ByteString("key", item.KeyCopy(nil)))
				continue
			}
			set, ok := sets[m.ws]
			if !ok {
				if set, err = readSet(snap.Get, s, m.ws); err != nil {
					return err
				}
			}
			next := removeEntry(set, m.seq, m.id)
			if m.in {
				next = addEntry(set, m.seq, m.id)
			}
			if len(next) != len(set) && !changed[m.ws] {
				changed[m.ws] = true
				order = append(order, m.ws)
			}
			sets[m.ws] = next
		}
		return nil
	}()
	if err != nil {
		return err
	}
	if s.legacy != 0 {
		stale = keysSince(snap, newKey(s.legacy), since)
	}
	if found && scanned == 0 && len(stale) == 0 {
		return nil // nothing written since the marker: a no-op
	}
	w := batchWriter{db: db, name: s.name}
	defer w.discard()
	for _, ws := range order {
		k, set := s.key(ws), sets[ws]
		err := w.do(func(txn *badger.Txn) error {
			if len(set) == 0 {
				return txn.Delete(k)
			}
			return txn.Set(k, appendSet(nil, set))
		})
		if err != nil {
			return err
		}
	}
	for _, k := range stale {
		if err := w.do(func(txn *badger.Txn) error { return txn.Delete(k) }); err != nil {
			return err
		}
	}
	mark := binary.BigEndian.AppendUint64(nil, snap.ReadTs())
	if err := w.do(func(txn *badger.Txn) error { return txn.Set(s.mark, mark) }); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return err
	}
	if len(order) > 0 || len(stale) > 0 {
		log.Info("badgerstore: "+s.name+" indexed", zap.Int("records", scanned), zap.Int("workspaces", len(order)),
			zap.Int("staleEntries", len(stale)))
	}
	return nil
}

// keysSince returns the keys under prefix whose latest version is above
// since and not a deletion.
func keysSince(snap *badger.Txn, prefix key, since uint64) []key {
	it := snap.NewIterator(badger.IteratorOptions{Prefix: prefix, SinceTs: since})
	defer it.Close()
	var out []key
	for it.Rewind(); it.Valid(); it.Next() {
		out = append(out, it.Item().KeyCopy(nil))
	}
	return out
}

// readSet reads the set of ws with get (nil if absent).
func readSet(get func(key []byte) (*badger.Item, error), s *wsSet, ws baton.WorkspaceID) ([]setEntry, error) {
	k := s.key(ws)
	item, err := get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	var set []setEntry
	if err == nil {
		err = item.Value(func(b []byte) (derr error) { set, derr = decodeSet(b); return derr })
	}
	if err != nil {
		return nil, storageErr(fmt.Sprintf("read %s (key %q)", s.name, []byte(k)), err)
	}
	return set, nil
}

// setEntry is one member of a set: its insert number and id.
type setEntry struct {
	seq uint64
	id  string
}

func compareEntry(e setEntry, seq uint64, id string) int {
	if c := cmp.Compare(e.seq, seq); c != 0 {
		return c
	}
	return strings.Compare(e.id, id)
}

// addEntry returns set with (seq, id) in its place, by insert number
// (set itself if it is there already; otherwise a new slice).
func addEntry(set []setEntry, seq uint64, id string) []setEntry {
	n, found := slices.BinarySearchFunc(set, seq, func(e setEntry, seq uint64) int { return compareEntry(e, seq, id) })
	if found {
		return set
	}
	return slices.Insert(slices.Clone(set), n, setEntry{seq, id})
}

// removeEntry returns set without (seq, id) (set itself if it is not
// there; otherwise a new slice).
func removeEntry(set []setEntry, seq uint64, id string) []setEntry {
	n, found := slices.BinarySearchFunc(set, seq, func(e setEntry, seq uint64) int { return compareEntry(e, seq, id) })
	if !found {
		return set
	}
	return slices.Delete(slices.Clone(set), n, n+1)
}

// appendSet appends the stored form of set: for each entry its seq (8
// bytes big-endian), then the uvarint length of its id and the id.
func appendSet(b []byte, set []setEntry) []byte {
	for _, e := range set {
		b = binary.BigEndian.AppendUint64(b, e.seq)
		b = binary.AppendUvarint(b, uint64(len(e.id)))
		b = append(b, e.id...)
	}
	return b
}

// decodeSet decodes what appendSet wrote, checking that the entries are
// in order (an empty set is never stored: its key is deleted).
func decodeSet(b []byte) ([]setEntry, error) {
	if len(b) == 0 {
		return nil, errors.New("empty set")
	}
	var set []setEntry
	for len(b) > 0 {
		if len(b) < 9 {
			return nil, errors.New("set: truncated entry")
		}
		seq := binary.BigEndian.Uint64(b)
		n, w := binary.Uvarint(b[8:])
		if w <= 0 || n == 0 || n > uint64(len(b)-8-w) {
			return nil, errors.New("set: bad id length")
		}
		id := string(b[8+w : 8+w+int(n)])
		if len(set) > 0 && compareEntry(set[len(set)-1], seq, id) >= 0 {
			return nil, errors.New("set: entries out of order")
		}
		set = append(set, setEntry{seq, id})
		b = b[8+w+int(n):]
	}
	return set, nil
}

// setMark returns the version s.mark holds; found is false (and the
// version 0: every record is read) if it is absent or not 8 bytes long.
func setMark(txn *badger.Txn, s *wsSet) (v uint64, found bool, err error) {
	item, err := txn.Get(s.mark)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, storageErr("read "+s.name+" marker", err)
	}
	b, err := item.ValueCopy(nil)
	if err != nil {
		return 0, false, storageErr("read "+s.name+" marker", err)
	}
	if len(b) != 8 {
		return 0, false, nil
	}
	return binary.BigEndian.Uint64(b), true, nil
}

// batchWriter writes in as few badger transactions as their size limit
// allows, syncing the logs after each commit (syncLogs), so that a later
// batch (the marker last) never outlives an earlier one in a power loss.
type batchWriter struct {
	db   *badger.DB
	name string // of the set, in errors
	txn  *badger.Txn
}

// do applies op to the open batch, or to a new one if the open one is
// full (badger.ErrTxnTooBig).
func (w *batchWriter) do(op func(*badger.Txn) error) error {
	if w.txn == nil {
		w.txn = w.db.NewTransaction(true)
	}
	err := op(w.txn)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err := w.commit(); err != nil {
			return err
		}
		w.txn = w.db.NewTransaction(true)
		err = op(w.txn)
	}
	if err != nil {
		return storageErr(w.name+": write", err)
	}
	return nil
}

// commit commits and syncs the open batch, if any.
func (w *batchWriter) commit() error {
	if w.txn == nil {
		return nil
	}
	txn := w.txn
	w.txn = nil
	err := txn.Commit()
	if err == nil {
		err = syncLogs(w.db)
	}
	if err != nil {
		return storageErr(w.name+": commit", err)
	}
	return nil
}

// discard drops the open batch, if any.
func (w *batchWriter) discard() {
	if w.txn != nil {
		w.txn.Discard()
		w.txn = nil
	}
}

// syncLogs makes every commit badger has accepted durable: DB.Sync, which
// syncs the log of the active memtable and the newest value log only, and
// then every memtable and value log file of the directory, so that a
// commit in a memtable rotated out meanwhile is covered too (the gap the
// group commit's rounds close the same way). Open's own writes use it
// before each write that depends on them (a set's marker, the format).
func syncLogs(db *badger.DB) error {
	if err := db.Sync(); err != nil {
		return err
	}
	opts := db.Opts()
	for _, dir := range slices.Compact([]string{opts.Dir, opts.ValueDir}) {
		names, err := readDirNames(dir)
		if err != nil {
			return err
		}
		for _, name := range names {
			if ext := filepath.Ext(name); ext == ".mem" || ext == ".vlog" {
				if err := fsyncFile(filepath.Join(dir, name)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// memberSet returns the set of ws (which enters the read set, so that an
// Update that read it conflicts with any concurrent change to it).
func (t *tx) memberSet(s *wsSet, ws baton.WorkspaceID) ([]setEntry, error) {
	return readSet(func(k []byte) (*badger.Item, error) { return t.get(k) }, s, ws)
}

// memberIDs returns the ids in the set of ws, by insert number.
func (t *tx) memberIDs(s *wsSet, ws baton.WorkspaceID) ([]string, error) {
	set, err := t.memberSet(s, ws)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(set))
	for n, e := range set {
		ids[n] = e.id
	}
	return ids, nil
}

// moveMember updates the sets of s for a record written as v, which was
// cur (nil: inserted): it leaves the set of cur's workspace if it was in
// it and is not any more, and joins the set of v's workspace if it
// belongs there and was not there. A write that keeps a record in, or
// out, reads and writes no set. The record is written already: a set that
// cannot be read breaks the transaction, as a failed write does, so that
// the record never commits without it.
func (t *tx) moveMember(s *wsSet, cur *member, v member) error {
	was := cur != nil && cur.in
	same := cur != nil && cur.ws == v.ws
	if was && (!v.in || !same) {
		set, err := t.memberSet(s, cur.ws)
		if err != nil {
			return t.breakWith(err)
		}
		if err := t.putMemberSet(s, cur.ws, removeEntry(set, cur.seq, cur.id)); err != nil {
			return err
		}
	}
	if v.in && (!was || !same) {
		set, err := t.memberSet(s, v.ws)
		if err != nil {
			return t.breakWith(err)
		}
		return t.putMemberSet(s, v.ws, addEntry(set, v.seq, v.id))
	}
	return nil
}

// breakWith marks the transaction broken by err (see tx.broken), unless
// it is already, and returns err.
func (t *tx) breakWith(err error) error {
	if t.broken == nil {
		t.broken = err
	}
	return err
}

// putMemberSet writes the set of ws (deleting the key when it is empty).
func (t *tx) putMemberSet(s *wsSet, ws baton.WorkspaceID, set []setEntry) error {
	if len(set) == 0 {
		return t.del(s.key(ws))
	}
	return t.set(s.key(ws), appendSet(nil, set))
}
