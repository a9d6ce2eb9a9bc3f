package tlog

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/transcript"
)

// Writer appends to one session's transcript. It holds the transcript's
// lock until Close: one Writer per transcript, in any process.
type Writer struct {
	mu   sync.Mutex
	data *os.File
	idx  *os.File
	n    int64  // events indexed
	end  uint64 // end offset of the last indexed event
	err  error  // first write error; later appends are dropped
}

// Path is where session sid's transcript is under dataDir:
// dataDir/transcripts/<sid>.jsonl, the id escaped for a file name.
func Path(dataDir string, sid baton.SessionID) string {
	return filepath.Join(dataDir, "transcripts", url.PathEscape(string(sid))+".jsonl")
}

// OpenSession is Open of session sid's transcript under dataDir for
// engine name: ErrBusy as is, any other error an EUNAVAILABLE one.
func OpenSession(name, dataDir string, sid baton.SessionID) (*Writer, error) {
	w, err := Open(Path(dataDir, sid))
	if err != nil && !errors.Is(err, ErrBusy) {
		return nil, baton.Errorf(baton.ErrUnavailable, "%s: transcript of %s: %v", name, sid, err)
	}
	return w, err
}

// Open opens (creating) the transcript at path, takes its lock and
// repairs what a crash may have torn: index entries that point past the
// data are dropped, complete lines after the last indexed one are
// indexed, and a partial last line is cut.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Both files are opened to append: every write lands at the end, where
	// the repair's truncations leave it.
	data, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	w := &Writer{data: data}
	if err := proc.LockFile(data); err != nil {
		data.Close()
		return nil, baton.Errorf(ErrBusy, "%s: %v", path, err)
	}
	if w.idx, err = os.OpenFile(path+IndexSuffix, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
		data.Close()
		return nil, err
	}
	if err := w.repair(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) repair() error {
	ist, err := w.idx.Stat()
	if err != nil {
		return err
	}
	dst, err := w.data.Stat()
	if err != nil {
		return err
	}
	// The last index entry that points inside the data ends the indexed
	// events.
	size := uint64(dst.Size())
	for w.n = ist.Size() / 8; w.n > 0; w.n-- {
		var e [8]byte
		if _, err := w.idx.ReadAt(e[:], 8*(w.n-1)); err != nil {
			return err
		}
		if end := binary.LittleEndian.Uint64(e[:]); end <= size {
			w.end = end
			break
		}
	}
	// Index the complete lines written after the last index entry; a
	// partial last line is cut below.
	r := bufio.NewReader(io.NewSectionReader(w.data, int64(w.end), int64(size-w.end)))
	var ents []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		w.end += uint64(len(line))
		ents = binary.LittleEndian.AppendUint64(ents, w.end)
	}
	if 8*w.n != ist.Size() || len(ents) > 0 {
		if err := w.idx.Truncate(8 * w.n); err != nil {
			return err
		}
		if _, err := w.idx.Write(ents); err != nil {
			return err
		}
	}
	w.n += int64(len(ents) / 8)
	if w.end != size {
		return w.data.Truncate(int64(w.end))
	}
	return nil
}

// Append records events of a launch whose first turn is turn (an event
// that names no turn of its own is stamped with it); write errors are kept
// (see Sync).
func (w *Writer) Append(at time.Time, launch baton.LaunchID, turn transcript.Turn, evs ...transcript.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range evs {
		ev.Turn = cmp.Or(ev.Turn, turn)
		if w.err == nil {
			w.err = w.writeLocked(at, launch, ev)
		}
		w.n++
	}
}

func (w *Writer) writeLocked(at time.Time, launch baton.LaunchID, ev transcript.Event) error {
	b, err := encodeRecord(at, launch, ev)
	if err != nil {
		return err
	}
	if _, err := w.data.Write(b); err != nil {
		return err
	}
	w.end += uint64(len(b))
	var e [8]byte
	_, err = w.idx.Write(binary.LittleEndian.AppendUint64(e[:0], w.end))
	return err
}

// Sync makes the transcript durable and reports the first write error.
// The fsyncs run outside the lock, so appends never wait for the disk; the
// caller must not Close meanwhile.
func (w *Writer) Sync() error {
	w.mu.Lock()
	err, data, idx := w.err, w.data, w.idx
	w.mu.Unlock()
	if err != nil {
		return err
	}
	return errors.Join(data.Sync(), idx.Sync())
}

// Close syncs and closes the files, releasing the lock.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.data.Sync(), w.idx.Sync(), w.data.Close(), w.idx.Close())
}
