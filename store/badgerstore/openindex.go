package badgerstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
)

// syncOpenIndex brings the open instructions ('o' table) up to date with
// the instruction records, on Open, before any transaction runs. Every
// transaction of this code writes an instruction and its entries together;
// what it repairs are the records a baton that predates the index wrote:
// all of them in a directory that never had it, and, in a directory this
// code indexed, those an older baton wrote when it opened the directory
// since (it reads the directory, format 1, and ignores the index and its
// marker).
//
// openIndexKey holds a badger version up to which the index is known to
// follow the records. syncOpenIndex reads, on one snapshot, only the
// instruction records whose latest version is above it (all of them when
// the marker is absent; badger skips the tables older than the marker
// whole), and sets or deletes the entry of each to match its state, where
// it differs. The writes go in batches (a badger transaction has a size
// limit), each synced before the next, and the marker, set to the
// snapshot's version, goes last: a crash in between leaves the marker as
// it was, and the next Open does it again (setting an entry that is there
// or deleting one that is not changes nothing). A second Open finds no
// record above the marker and writes nothing. Close moves the marker to
// the last commit, so the next Open reads nothing either.
//
// A record that does not decode is skipped, with a warning: every read of
// it fails with ErrStorage anyway, and it must not keep the store closed.
func syncOpenIndex(db *badger.DB, log *zap.Logger) error {
	snap := db.NewTransaction(false)
	defer snap.Discard()
	since, found, err := openIndexMark(snap)
	if err != nil {
		return err
	}
	w := batchWriter{db: db}
	defer w.discard()
	var scanned, fixed int
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
			k := openInstructionKey(v)
			_, err := snap.Get(k)
			has := err == nil
			if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return storageErr(fmt.Sprintf("open instructions: read (key %q)", []byte(k)), err)
			}
			switch {
			case v.State.Open() && !has:
				err = w.do(func(txn *badger.Txn) error { return txn.Set(k, []byte(v.ID)) })
			case !v.State.Open() && has:
				err = w.do(func(txn *badger.Txn) error { return txn.Delete(k) })
			default:
				continue
			}
			if err != nil {
				return err
			}
			fixed++
		}
		return nil
	}()
	if err != nil {
		return err
	}
	if found && scanned == 0 {
		return nil // nothing written since the marker: a no-op
	}
	mark := binary.BigEndian.AppendUint64(nil, snap.ReadTs())
	if err := w.do(func(txn *badger.Txn) error { return txn.Set(openIndexKey, mark) }); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return err
	}
	if fixed > 0 {
		log.Info("badgerstore: open instructions indexed", zap.Int("records", scanned), zap.Int("entries", fixed))
	}
	return nil
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
// transaction runs: every record up to it was written with its entries.
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
