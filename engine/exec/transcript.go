package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/recap"
)

// Transcript errors. Match with errors.Is.
var (
	// ErrTranscriptCorrupt: the transcript or its index does not hold
	// what the other says (a torn write the writer has not repaired yet,
	// or a file edited by hand).
	ErrTranscriptCorrupt = baton.NewError(baton.EINTERNAL, "exec: transcript corrupt")
	// ErrTranscriptBusy: another writer (another Engine, in this process
	// or another) has the session's transcript open.
	ErrTranscriptBusy = baton.NewError(baton.EBUSY, "exec: transcript written by another process")
)

// indexSuffix names a transcript's offset index: the transcript's path plus
// this suffix. Entry i (8 bytes, little-endian) is the end offset of event i
// in the transcript, so event i spans [entry i-1, entry i).
const indexSuffix = ".idx"

// record is one transcript line.
type record struct {
	At      time.Time      `json:"at"`
	Launch  baton.LaunchID `json:"launch,omitempty"`
	Speaker string         `json:"speaker,omitempty"`
	Kind    string         `json:"kind"`
	Text    string         `json:"text"`
}

var speakerNames = map[recap.Speaker]string{recap.User: "user", recap.Agent: "agent"}
var kindNames = map[recap.Kind]string{recap.Message: "message", recap.ToolCall: "tool", recap.Lifecycle: "lifecycle", recap.Note: "note"}

func encodeRecord(buf []byte, at time.Time, launch baton.LaunchID, ev recap.Event) ([]byte, error) {
	kind, ok := kindNames[ev.Kind]
	if !ok {
		kind = "note"
	}
	b, err := json.Marshal(record{At: at.UTC(), Launch: launch, Speaker: speakerNames[ev.Speaker], Kind: kind, Text: ev.Text})
	if err != nil {
		return buf, err
	}
	return append(append(buf, b...), '\n'), nil
}

func decodeRecord(line []byte) (recap.Event, error) {
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return recap.Event{}, baton.Errorf(ErrTranscriptCorrupt, "%v", err)
	}
	ev := recap.Event{Text: r.Text, Kind: recap.Note}
	for s, n := range speakerNames {
		if n == r.Speaker {
			ev.Speaker = s
		}
	}
	for k, n := range kindNames {
		if n == r.Kind {
			ev.Kind = k
		}
	}
	return ev, nil
}

// Transcript reads a session's transcript: append-only JSON lines, one
// event each, beside an offset index, so reading event i costs the same at
// the start and at the end of a large file. A Transcript reads a file that
// a live launch may be appending to; it sees every event indexed when Len
// or Events is called. It is safe for concurrent use.
type Transcript struct {
	data, idx *os.File
}

// OpenTranscript opens the transcript at path (see Engine.TranscriptPath).
// Errors: an ENOTFOUND error when there is none, or the file system's.
func OpenTranscript(path string) (*Transcript, error) {
	data, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, baton.Errorf(baton.ErrNotFound, "exec: no transcript at %s", path)
		}
		return nil, err
	}
	idx, err := os.Open(path + indexSuffix)
	if err != nil {
		data.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, baton.Errorf(baton.ErrNotFound, "exec: no transcript index at %s", path+indexSuffix)
		}
		return nil, err
	}
	return &Transcript{data: data, idx: idx}, nil
}

// Len returns the number of events. Errors: ctx's, or the file system's.
func (t *Transcript) Len(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	st, err := t.idx.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size() / 8, nil
}

// Events returns up to n events starting at index from (0 is the first);
// fewer at the end, none when from is at or past the end. Errors:
// baton.ErrInvalid for a negative from or n, ErrTranscriptCorrupt, ctx's,
// or the file system's.
func (t *Transcript) Events(ctx context.Context, from int64, n int) ([]recap.Event, error) {
	if from < 0 || n < 0 {
		return nil, baton.Errorf(baton.ErrInvalid, "exec: transcript range from %d, n %d", from, n)
	}
	total, err := t.Len(ctx)
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
	if _, err := t.idx.ReadAt(ents, 8*first); err != nil {
		return nil, baton.Errorf(ErrTranscriptCorrupt, "index: %v", err)
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
		return nil, baton.Errorf(ErrTranscriptCorrupt, "index range %d..%d", start, end)
	}
	buf := make([]byte, end-start)
	if _, err := t.data.ReadAt(buf, int64(start)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, baton.Errorf(ErrTranscriptCorrupt, "index points past the end")
		}
		return nil, err
	}
	evs := make([]recap.Event, 0, k)
	for i := 1; i < len(offs); i++ {
		a, b := offs[i-1]-start, offs[i]-start
		if b < a || b > uint64(len(buf)) {
			return nil, baton.Errorf(ErrTranscriptCorrupt, "index entry %d", from+int64(i-1))
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
func (t *Transcript) Close() error {
	return errors.Join(t.data.Close(), t.idx.Close())
}
