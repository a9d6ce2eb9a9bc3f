package badgerstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
)

// wsSet describes a per-workspace set: one value per workspace (key: the
// set's table and the workspace) listing, by insert number, the records of
// a kind that are in a given state, which reads it instead of a list of
// keys (see the key layout in keys.go). Every write of such a record
// updates the set in the same transaction (tx.moveMember).
type wsSet struct {
	name  string // in errors
	table byte   // the table of the sets
}

// member is what a wsSet reads of a record: its workspace, insert number
// and id, and whether it belongs in the set.
type member struct {
	ws  baton.WorkspaceID
	seq uint64
	id  string
	in  bool
}

func (i instructionRow) member() member {
	return member{i.Workspace, i.Seq, string(i.ID), i.State.Open()}
}

func (l launchRow) member() member {
	return member{l.Workspace, l.Seq, string(l.ID), !l.Gone}
}

var (
	// openInstructions are the pending and unknown instructions of each
	// workspace (OpenInstructions).
	openInstructions = &wsSet{name: "open instructions", table: tOpenInstr}
	// liveLaunches are the live launches of each workspace (LiveLaunches(ws)).
	liveLaunches = &wsSet{name: "live launches", table: tLiveSet}
)

// key returns the key of the set of ws.
func (s *wsSet) key(ws baton.WorkspaceID) key { return newKey(s.table).str(string(ws)) }

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
