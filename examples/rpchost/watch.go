package main

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// absentPolls is how many consecutive polls must find the public entry
// missing before a host counts itself superseded: a successor's rename
// replaces it atomically, so "absent" is only ever a transient or a
// removal, never proof of a successor.
const absentPolls = 3

// verdict is what one poll of the public entry concludes.
type verdict int

const (
	stillOurs verdict = iota
	replaced          // another entry holds the path: a positive observation
	vanished          // absent for absentPolls polls in a row
)

// entryWatch decides, poll by poll, whether the host's public entry was
// taken over.
type entryWatch struct {
	own    fileID
	absent int
}

// observe takes one poll: the entry's id, or exists false when nothing is
// at the path.
func (w *entryWatch) observe(id fileID, exists bool) verdict {
	if !exists {
		w.absent++
		if w.absent >= absentPolls {
			return vanished
		}
		return stillOurs
	}
	w.absent = 0
	if id != w.own {
		return replaced
	}
	return stillOurs
}

// watchEntry polls path every poll until it concludes (and calls
// superseded once) or ctx ends. An unreadable entry (a permission error)
// concludes nothing.
func watchEntry(ctx context.Context, path string, own fileID, poll time.Duration, superseded func(verdict)) {
	w := entryWatch{own: own}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		id, _, err := statID(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if v := w.observe(id, err == nil); v != stillOurs {
			superseded(v)
			return
		}
	}
}
