package badgerstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/batonhq/baton"
)

// wsSet is a per-workspace set, named by its table: one value per
// workspace (key: the table and the workspace) listing, by insert number,
// the records of a kind that are in a given state, which reads it instead
// of a list of keys (see the key layout in codec.go). Every write of such a
// record updates the set in the same transaction (tx.moveMember).
type wsSet byte

// member is what a wsSet reads of a record: its workspace, insert number
// and id, and whether it belongs in the set (never, for the zero record
// that stands for none).
type member struct {
	ws  baton.WorkspaceID
	seq uint64
	id  string
	in  bool
}

func (i instructionRow) member() member {
	return member{i.Workspace, i.Seq, string(i.ID), i.ID != "" && i.State.Open()}
}

func (l launchRow) member() member {
	return member{l.Workspace, l.Seq, string(l.ID), l.ID != "" && !l.Gone}
}

const (
	// openInstructions are the pending and unknown instructions of each
	// workspace (OpenInstructions).
	openInstructions wsSet = tOpenInstr
	// liveLaunches are the live launches of each workspace (LiveLaunches(ws)).
	liveLaunches wsSet = tLiveSet
)

// key returns the key of the set of ws.
func (s wsSet) key(ws baton.WorkspaceID) key { return newKey(byte(s)).str(string(ws)) }

// setEntry is one member of a set: its insert number and id.
type setEntry struct {
	seq uint64
	id  string
}

func compareEntry(a, b setEntry) int {
	return cmp.Or(cmp.Compare(a.seq, b.seq), strings.Compare(a.id, b.id))
}

// withEntry returns set with e in its place, by insert number (in true),
// or without it (in false): set itself if that is so already, otherwise
// a new slice.
func withEntry(set []setEntry, e setEntry, in bool) []setEntry {
	n, found := slices.BinarySearchFunc(set, e, compareEntry)
	switch {
	case found == in:
		return set
	case in:
		return slices.Insert(slices.Clone(set), n, e)
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
		if len(set) > 0 && compareEntry(set[len(set)-1], setEntry{seq, id}) >= 0 {
			return nil, errors.New("set: entries out of order")
		}
		set = append(set, setEntry{seq, id})
		b = b[8+w+int(n):]
	}
	return set, nil
}

// memberSet returns the set of ws (which enters the read set, so that an
// Update that read it conflicts with any concurrent change to it).
func (t *tx) memberSet(s wsSet, ws baton.WorkspaceID) (set []setEntry, err error) {
	_, err = t.read(s.key(ws), func(b []byte) (err error) {
		set, err = decodeSet(b)
		return err
	})
	return set, err
}

// listedSet returns, after the readable check, the records in the set of
// ws, by insert number, read from table.
func listedSet[W, R any](t *tx, s wsSet, ws baton.WorkspaceID, table byte, record func(W) R) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	set, err := t.memberSet(s, ws)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(set))
	for n, e := range set {
		ids[n] = e.id
	}
	return load(t, ids, table, record)
}

// moveMember updates the sets of s for a record written as v, which was
// cur (not in any set: inserted): it leaves the set of cur's workspace if it was in
// it and is not any more, and joins the set of v's workspace if it
// belongs there and was not there. A write that keeps a record in, or
// out, reads and writes no set.
func (t *tx) moveMember(s wsSet, cur, v member) error {
	was, same := cur.in, cur.ws == v.ws
	if was && (!v.in || !same) {
		if err := t.putMember(s, cur, false); err != nil {
			return err
		}
	}
	if v.in && (!was || !same) {
		return t.putMember(s, v, true)
	}
	return nil
}

// putMember adds m to the set of its workspace (in true) or removes it,
// deleting the set's key when it becomes empty. The record is written
// already: a set that cannot be read breaks the transaction, as a failed
// write does, so that the record never commits without it.
func (t *tx) putMember(s wsSet, m member, in bool) error {
	set, err := t.memberSet(s, m.ws)
	if err != nil {
		if t.broken == nil {
			t.broken = err
		}
		return err
	}
	k := s.key(m.ws)
	if set = withEntry(set, setEntry{m.seq, m.id}, in); len(set) == 0 {
		return t.del(k)
	}
	return t.set(k, appendSet(nil, set))
}
