package tlog

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/transcript"
)

// TestRepairLongLines: Open indexes the complete lines a crash left
// unindexed, however long (longer than the reader's buffer), and cuts a
// partial last line, however long.
func TestRepairLongLines(t *testing.T) {
	path := t.TempDir() + "/t.jsonl"
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Append(time.Unix(0, 0), "l1", transcript.Normal, transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: "one"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 10_000)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"at":"2026-01-01T00:00:00Z","kind":"note","text":"` + long + `"}` + "\n" + `{"at":"2026-01-01T00:00:00Z","kind":"note","text":"` + long); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if w, err = Open(path); err != nil {
		t.Fatal(err)
	}
	w.Append(time.Unix(0, 0), "l2", transcript.Normal, transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: "two"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	evs, err := r.Events(t.Context(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range evs {
		texts = append(texts, ev.Text)
	}
	if len(texts) != 3 || texts[0] != "one" || texts[1] != long || texts[2] != "two" {
		t.Fatalf("events after the repair: %.40q", texts)
	}
}
