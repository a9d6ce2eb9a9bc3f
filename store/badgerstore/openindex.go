package badgerstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

// syncOpenIndex brings the open instructions ('o' table) up to date with
// the instruction records, on Open, before any transaction runs. Every
// transaction of this code writes an instruction and its workspace's open
// set together; what it repairs are the records a baton that predates the
// set wrote: all of them in a directory that never had it, and, in a
// directory this code indexed, those an older baton wrote when it opened
// the directory since (it reads the directory, format 1, and ignores the
// sets and their marker).
//
// openIndexKey holds a badger version up to which the sets are known to
// follow the records. syncOpenIndex reads, on one snapshot, only the
// instruction records whose latest version is above it (all of them when
// the marker is absent; badger skips the tables older than the marker
// whole), adds each open one to its workspace's set and removes each
// other one, and writes the sets that changed. The writes go in batches
// (a badger transaction has a size limit), each synced before the next,
// and the marker, set to the snapshot's version, goes last: a crash in
// between leaves the marker as it was, and the next Open does it again
// (adding an entry that is there or removing one that is not changes
// nothing). A second Open finds no record above the marker and writes
// nothing. Close moves the marker to the last commit, so the next Open
// reads nothing either.
//
// A record that does not decode is skipped, with a warning: every read of
// it fails with ErrStorage anyway, and it must not keep the store closed.
// A set that does not decode is an ErrStorage.
func syncOpenIndex(db *badger.DB, log *zap.Logger) error {
	snap := db.NewTransaction(false)
	defer snap.Discard()
	since, found, err := openIndexMark(snap)
	if err != nil {
		return err
	}
	sets := map[baton.WorkspaceID][]openEntry{}
	changed := map[baton.WorkspaceID]bool{}
	var order []baton.WorkspaceID // the sets changed, in the order met
	scanned := 0
	err = func() error {
		it := snap.NewIterator(badger.IteratorOptions{Prefix: newKey(tInstruction), SinceTs: since, PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			scanned++
			var v instructionV1
			if err := item.Value(func(b []byte) error { return decode(b, &v) }); err != nil {
				log.Warn("badgerstore: open instructions: skipping an instruction record", zap.ByteString("key", item.KeyCopy(nil)), zap.Error(err))
				continue
			}
			if v.ID == "" || v.Workspace == "" {
				log.Warn("badgerstore: open instructions: skipping an instruction record without id or workspace", zap.ByteString("key", item.KeyCopy(nil)))
				continue
			}
			set, ok := sets[v.Workspace]
			if !ok {
				if set, err = storedOpenSet(snap, v.Workspace); err != nil {
					return err
				}
			}
			next := removeOpen(set, v.Seq, string(v.ID))
			if v.State.Open() {
				next = addOpen(set, v.Seq, string(v.ID))
			}
			if len(next) != len(set) && !changed[v.Workspace] {
				changed[v.Workspace] = true
				order = append(order, v.Workspace)
			}
			sets[v.Workspace] = next
		}
		return nil
	}()
	if err != nil {
		return err
	}
	if found && scanned == 0 {
		return nil // nothing written since the marker: a no-op
	}
	w := batchWriter{db: db}
	defer w.discard()
	for _, ws := range order {
		k, set := openKey(ws), sets[ws]
		err := w.do(func(txn *badger.Txn) error {
			if len(set) == 0 {
				return txn.Delete(k)
			}
			return txn.Set(k, appendOpenSet(nil, set))
		})
		if err != nil {
			return err
		}
	}
	mark := binary.BigEndian.AppendUint64(nil, snap.ReadTs())
	if err := w.do(func(txn *badger.Txn) error { return txn.Set(openIndexKey, mark) }); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return err
	}
	if len(order) > 0 {
		log.Info("badgerstore: open instructions indexed", zap.Int("records", scanned), zap.Int("workspaces", len(order)))
	}
	return nil
}

// storedOpenSet reads the open set of ws in txn (nil if absent).
func storedOpenSet(txn *badger.Txn, ws baton.WorkspaceID) ([]openEntry, error) {
	k := openKey(ws)
	item, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	var set []openEntry
	if err == nil {
		err = item.Value(func(b []byte) (derr error) { set, derr = decodeOpenSet(b); return derr })
	}
	if err != nil {
		return nil, storageErr(fmt.Sprintf("open instructions: read (key %q)", []byte(k)), err)
	}
	return set, nil
}

// openEntry is one open instruction in its workspace's set: its insert
// number and id.
type openEntry struct {
	seq uint64
	id  string
}

func compareOpen(e openEntry, seq uint64, id string) int {
	if c := cmp.Compare(e.seq, seq); c != 0 {
		return c
	}
	return strings.Compare(e.id, id)
}

// addOpen returns set with (seq, id) in its place, by insert number
// (set itself if it is there already; otherwise a new slice).
func addOpen(set []openEntry, seq uint64, id string) []openEntry {
	n, found := slices.BinarySearchFunc(set, seq, func(e openEntry, seq uint64) int { return compareOpen(e, seq, id) })
	if found {
		return set
	}
	return slices.Insert(slices.Clone(set), n, openEntry{seq, id})
}

// removeOpen returns set without (seq, id) (set itself if it is not
// there; otherwise a new slice).
func removeOpen(set []openEntry, seq uint64, id string) []openEntry {
	n, found := slices.BinarySearchFunc(set, seq, func(e openEntry, seq uint64) int { return compareOpen(e, seq, id) })
	if !found {
		return set
	}
	return slices.Delete(slices.Clone(set), n, n+1)
}

// appendOpenSet appends the stored form of set: for each entry its seq
// (8 bytes big-endian), then the uvarint length of its id and the id.
func appendOpenSet(b []byte, set []openEntry) []byte {
	for _, e := range set {
		b = binary.BigEndian.AppendUint64(b, e.seq)
		b = binary.AppendUvarint(b, uint64(len(e.id)))
		b = append(b, e.id...)
	}
	return b
}

// decodeOpenSet decodes what appendOpenSet wrote, checking that the
// entries are in order (an empty set is never stored: its key is
// deleted).
func decodeOpenSet(b []byte) ([]openEntry, error) {
	if len(b) == 0 {
		return nil, errors.New("open instructions: empty set")
	}
	var set []openEntry
	for len(b) > 0 {
		if len(b) < 9 {
			return nil, errors.New("open instructions: truncated entry")
		}
		seq := binary.BigEndian.Uint64(b)
		n, w := binary.Uvarint(b[8:])
		if w <= 0 || n == 0 || n > uint64(len(b)-8-w) {
			return nil, errors.New("open instructions: bad id length")
		}
		id := string(b[8+w : 8+w+int(n)])
		if len(set) > 0 && compareOpen(set[len(set)-1], seq, id) >= 0 {
			return nil, errors.New("open instructions: entries out of order")
		}
		set = append(set, openEntry{seq, id})
		b = b[8+w+int(n):]
	}
	return set, nil
}

// openIndexMark returns the version openIndexKey holds; found is false
// (and the version 0: every record is read) if it is absent or not 8
// bytes long.
func openIndexMark(txn *badger.Txn) (v uint64, found bool, err error) {
	item, err := txn.Get(openIndexKey)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, storageErr("read open instructions marker", err)
	}
	b, err := item.ValueCopy(nil)
	if err != nil {
		return 0, false, storageErr("read open instructions marker", err)
	}
	if len(b) != 8 {
		return 0, false, nil
	}
	return binary.BigEndian.Uint64(b), true, nil
}

// markOpenIndex moves openIndexKey to the last commit, on Close, once no
// transaction runs: every record up to it was written together with its
// workspace's open set.
// It writes nothing if nothing was committed since the marker.
func markOpenIndex(db *badger.DB) error {
	return db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(openIndexKey)
		if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err == nil && item.Version() >= db.MaxVersion() {
			return nil
		}
		return txn.Set(openIndexKey, binary.BigEndian.AppendUint64(nil, txn.ReadTs()))
	})
}

// batchWriter writes in as few badger transactions as their size limit
// allows, syncing each one's log after its commit: no other transaction
// runs meanwhile, so each batch is in the active memtable when it is
// synced, and a later batch (the marker last) never outlives an earlier
// one in a power loss.
type batchWriter struct {
	db  *badger.DB
	txn *badger.Txn
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
		return storageErr("open instructions: write", err)
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
		err = w.db.Sync()
	}
	if err != nil {
		return storageErr("open instructions: commit", err)
	}
	return nil
}

func (w *batchWriter) discard() {
	if w.txn != nil {
		w.txn.Discard()
		w.txn = nil
	}
}
