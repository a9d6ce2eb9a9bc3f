//go:build linux

package exec

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// BenchmarkTranscriptEvents reads 10 events at the start, the middle and
// the end of a transcript of about 100 MB: the offset index makes the three
// cost the same.
func BenchmarkTranscriptEvents(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	w, err := tlog.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("x", 200)
	at := time.Unix(0, 0)
	const n = 400_000 // about 100 MB of lines
	for i := range n {
		w.Append(at, "L", transcript.Normal, transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: fmt.Sprintf("%d %s", i, text)})
	}
	if err := w.Sync(); err != nil {
		b.Fatal(err)
	}
	w.Close()
	tr, err := tlog.OpenReader(path)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	for _, at := range []struct {
		name string
		from int64
	}{{"start", 0}, {"middle", n / 2}, {"end", n - 10}} {
		b.Run(at.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evs, err := tr.Events(ctx, at.from, 10)
				if err != nil || len(evs) != 10 || !strings.HasPrefix(evs[0].Text, fmt.Sprint(at.from, " ")) {
					b.Fatalf("Events(%d) = %d events, %v", at.from, len(evs), err)
				}
			}
		})
	}
}
