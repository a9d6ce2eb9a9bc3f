package tlog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/transcript"
)

// Transcript errors. Match with errors.Is.
var (
	// ErrCorrupt: the transcript or its index does not hold what the other
	// says (a torn write the writer has not repaired yet, or a file edited
	// by hand).
	ErrCorrupt = baton.NewError(baton.ErrInternal, "transcript corrupt")
	// ErrBusy: another writer (in this process or another) has the
	// transcript open.
	ErrBusy = baton.NewError(baton.ErrBusy, "transcript written by another process")
)

// IndexSuffix names a transcript's offset index: the transcript's path plus
// this suffix. Entry i (8 bytes, little-endian) is the end offset of event i
// in the transcript, so event i spans [entry i-1, entry i).
const IndexSuffix = ".idx"

// record is one transcript line.
type record struct {
	At      time.Time      `json:"at"`
	Launch  baton.LaunchID `json:"launch,omitempty"`
	Speaker string         `json:"speaker,omitempty"`
	Kind    string         `json:"kind"`
	Text    string         `json:"text"`
	// Turn is the turn of the launch that wrote the event.
	Turn transcript.Turn `json:"turn,omitempty"`
}

var speakerNames = map[transcript.Speaker]string{transcript.User: "user", transcript.Agent: "agent"}
var kindNames = map[transcript.Kind]string{transcript.Message: "message", transcript.ToolCall: "tool", transcript.Lifecycle: "lifecycle", transcript.Note: "note"}

// encodeRecord is ev's transcript line; an unknown kind is a note.
func encodeRecord(at time.Time, launch baton.LaunchID, ev transcript.Event) ([]byte, error) {
	b, err := json.Marshal(record{At: at.UTC(), Launch: launch, Speaker: speakerNames[ev.Speaker], Kind: cmp.Or(kindNames[ev.Kind], "note"), Text: ev.Text, Turn: ev.Turn})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func decodeRecord(line []byte) (transcript.Event, error) {
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return transcript.Event{}, baton.Errorf(ErrCorrupt, "%v", err)
	}
	return transcript.Event{Speaker: named(speakerNames, r.Speaker, 0), Kind: named(kindNames, r.Kind, transcript.Note), Text: r.Text, Turn: r.Turn}, nil
}

// named returns the key of names whose name is n, or else unknown.
func named[K comparable](names map[K]string, n string, unknown K) K {
	for k, name := range names {
		if name == n {
			return k
		}
	}
	return unknown
}

// Reader reads a session's transcript: append-only JSON lines, one
// event each, beside an offset index, so reading event i costs the same at
// the start and at the end of a large file. A Reader reads a file that
// a live launch may be appending to; it sees every event indexed when Len
// or Events is called. It is safe for concurrent use.
type Reader struct {
	data, idx *os.File
}

// OpenReader opens the transcript at path.
// Errors: an ErrNotFound error when there is none, or the file system's.
func OpenReader(path string) (*Reader, error) {
	open := func(path, what string) (*os.File, error) {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, baton.Errorf(baton.ErrNotFound, "transcript: no %s at %s", what, path)
		}
		return f, err
	}
	data, err := open(path, "transcript")
	if err != nil {
		return nil, err
	}
	idx, err := open(path+IndexSuffix, "transcript index")
	if err != nil {
		data.Close()
		return nil, err
	}
	return &Reader{data: data, idx: idx}, nil
}

// Len returns the number of events. Errors: ctx's, or the file system's.
func (r *Reader) Len(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	st, err := r.idx.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size() / 8, nil
}

// Events returns up to n events starting at index from (0 is the first);
// fewer at the end, none when from is at or past the end. Errors:
// baton.ErrInvalid for a negative from or n, ErrCorrupt, ctx's,
// or the file system's.
func (r *Reader) Events(ctx context.Context, from int64, n int) ([]transcript.Event, error) {
	if from < 0 || n < 0 {
		return nil, baton.Errorf(baton.ErrInvalid, "transcript: transcript range from %d, n %d", from, n)
	}
	total, err := r.Len(ctx)
	if err != nil {
		return nil, err
	}
	if from >= total || n == 0 {
		return nil, nil
	}
	k := min(int64(n), total-from)
	// Read entries from-1 .. from+k-1: the start and end of each event.
	first := max(from-1, 0)
	ents := make([]byte, 8*(from+k-first))
	if _, err := r.idx.ReadAt(ents, 8*first); err != nil {
		return nil, baton.Errorf(ErrCorrupt, "index: %v", err)
	}
	offs := make([]uint64, 0, k+1)
	if from == 0 {
		offs = append(offs, 0)
	}
	for i := 0; i < len(ents); i += 8 {
		offs = append(offs, binary.LittleEndian.Uint64(ents[i:]))
	}
	start, end := offs[0], offs[len(offs)-1]
	if end < start || end-start > 1<<31 {
		return nil, baton.Errorf(ErrCorrupt, "index range %d..%d", start, end)
	}
	buf := make([]byte, end-start)
	if _, err := r.data.ReadAt(buf, int64(start)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, baton.Errorf(ErrCorrupt, "index points past the end")
		}
		return nil, err
	}
	evs := make([]transcript.Event, 0, k)
	for i := 1; i < len(offs); i++ {
		a, b := offs[i-1]-start, offs[i]-start
		if b < a || b > uint64(len(buf)) {
			return nil, baton.Errorf(ErrCorrupt, "index entry %d", from+int64(i-1))
		}
		ev, err := decodeRecord(bytes.TrimSuffix(buf[a:b], []byte{'\n'}))
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// Close closes the files.
func (r *Reader) Close() error {
	return errors.Join(r.data.Close(), r.idx.Close())
}

// batch is how many events Seq reads at a time.
const batch = 256

// Seq reads the transcript at path as an engine.Transcriber answers: each
// range opens it, reads it through its offset
// index batch events at a time, and closes it, so it holds one
// batch in memory whatever the transcript's length and sees what a live
// launch appended until then. Every event carries the turn of the launch
// that wrote it. Errors: missing when there is no transcript
// at path, or the file system's; while ranging, ctx's,
// ErrCorrupt or the file system's.
func Seq(ctx context.Context, path string, missing error) (iter.Seq2[transcript.Event, error], error) {
	if _, err := os.Stat(path + IndexSuffix); errors.Is(err, fs.ErrNotExist) {
		return nil, missing
	} else if err != nil {
		return nil, err
	}
	return func(yield func(transcript.Event, error) bool) {
		t, err := OpenReader(path)
		if err != nil {
			yield(transcript.Event{}, err)
			return
		}
		defer t.Close()
		for from := int64(0); ; {
			evs, err := t.Events(ctx, from, batch)
			if err != nil {
				yield(transcript.Event{}, err)
				return
			}
			if len(evs) == 0 {
				return
			}
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			from += int64(len(evs))
		}
	}, nil
}
