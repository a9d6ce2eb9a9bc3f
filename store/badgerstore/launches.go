package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// liveList holds the live launches of every workspace, oldest first: by
// CreatedAt, then workspace and insert number.
var liveList = globalList(tLive)

// launchIndexes is the entry of a live launch in the global live list; a
// launch that is not live has none. The live launches of one workspace
// are a per-workspace set instead (liveLaunches, see tx.moveMember).
func launchIndexes(l launchRow) []index {
	if l.Gone {
		return nil
	}
	id := string(l.ID)
	return []index{{liveList, liveList.prefix().time(l.CreatedAt).str(string(l.Workspace)).u64(l.Seq).str(id), id}}
}

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return getRecord[launchRow](t, recordKey(tLaunch, id), "launch", id)
}

// PutLaunch inserts or replaces l; a stored one keeps its insert number.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutLaunch(l store.Launch) error {
	k := recordKey(tLaunch, l.ID)
	cur, found, seq, err := currentSeq[launchRow](t, "PutLaunch", k, tLaunchSeq, l.Workspace, backend.Required(pkg, "launch", "ID", l.ID), backend.Required(pkg, "launch", "Workspace", l.Workspace))
	if err != nil {
		return err
	}
	v := toLaunch(l, seq)
	return putRecord(t, k, v, cur, found, tLaunchSeq, l.Workspace, seq, launchIndexes, "",
		func() error { return t.moveMember(liveLaunches, cur.member(), v.member()) },
	)
}

// LiveLaunches returns the live launches of ws in insert order, or with
// ws == "" those of every workspace oldest (CreatedAt, then workspace and
// insert order) first, reading only those: for one workspace the one
// value that lists them (see liveLaunches) and their records, for every
// workspace the global list.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	if ws == "" {
		return listed(t, liveList, nil, 0, tLaunch, launchRow.record)
	}
	return listedSet(t, liveLaunches, ws, tLaunch, launchRow.record)
}
