package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// liveList holds the live launches of every workspace, oldest first: by
// CreatedAt, then workspace and insert number.
var liveList = globalList(tLive)

// launchIndexes is the entry of a live launch in the global live list; a
// launch that is not live has none. The live launches of one workspace
// are a per-workspace set instead (liveLaunches, see tx.moveMember).
func launchIndexes(l launchV1) []index {
	if l.State != store.LaunchLive {
		return nil
	}
	id := string(l.ID)
	return []index{{liveList, liveList.prefix().time(l.CreatedAt).str(string(l.Workspace)).u64(l.Seq).str(id), id}}
}

func launchKeyOf(id string) key { return launchKey(baton.LaunchID(id)) }

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return getRecord[launchV1](t, launchKey(id), "launch", id)
}

// InsertLaunch adds l. store.ErrDuplicate if its id exists;
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) InsertLaunch(l store.Launch) error {
	if err := t.writable("InsertLaunch"); err != nil {
		return err
	}
	if err := firstErr(required("launch", "ID", l.ID), required("launch", "Workspace", l.Workspace)); err != nil {
		return err
	}
	k := launchKey(l.ID)
	if err := absent(t, k, "launch", l.ID); err != nil {
		return err
	}
	seq, err := t.peekSeq(tLiveByWS, l.Workspace)
	if err != nil {
		return err
	}
	v := toLaunch(l, seq)
	b, err := encode(v)
	if err != nil {
		return err
	}
	return firstErrOf(
		func() error { return t.takeSeq(tLiveByWS, l.Workspace, seq) },
		func() error { return t.setRecord(k, b, v) },
		func() error { return t.reindex(nil, launchIndexes(v)) },
		func() error { return t.moveMember(liveLaunches, nil, v.member()) },
	)
}

// PutLaunch replaces l, keeping its insert number. store.ErrNotFound if
// absent; baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutLaunch(l store.Launch) error {
	if err := t.writable("PutLaunch"); err != nil {
		return err
	}
	if err := required("launch", "ID", l.ID); err != nil {
		return err
	}
	cur, err := stored[launchV1](t, launchKey(l.ID), "launch", l.ID)
	if err != nil {
		return err
	}
	if err := required("launch", "Workspace", l.Workspace); err != nil {
		return err
	}
	v := toLaunch(l, cur.Seq)
	m := cur.member()
	return firstErrOf(
		func() error { return t.put(launchKey(l.ID), v) },
		func() error { return t.reindex(launchIndexes(cur), launchIndexes(v)) },
		func() error { return t.moveMember(liveLaunches, &m, v.member()) },
	)
}

// LiveLaunches returns the live launches of ws in insert order, or with
// ws == "" those of every workspace oldest (CreatedAt, then workspace and
// insert order) first, reading only those: for one workspace the one
// value that lists them (see liveKey) and their records, for every
// workspace the global list.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var ids []string
	var err error
	if ws != "" {
		ids, err = t.memberIDs(liveLaunches, ws)
	} else {
		ids, err = t.ids(liveList, nil, 0)
	}
	if err != nil {
		return nil, err
	}
	return load(t, ids, launchKeyOf, launchV1.record)
}
