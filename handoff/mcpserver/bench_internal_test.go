package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

// benchHistory builds a conversation of about size bytes of text: messages
// of chunksPerMessage chunks of ~200 bytes, alternating speakers, with a
// token shape in some chunks and a tool call after every message. The
// chunk strings are shared, so a 100 MB conversation costs its event
// slice, not 100 MB of heap; what is measured is the paging.
func benchHistory(size int) (MemHistory, []int64) {
	const chunksPerMessage = 12
	chunks := []string{
		strings.Repeat("The poll loop waits up to two seconds; ", 5),
		"Pushed with ghp_0123456789abcdefghijABCDEFGHIJ012345 and checked the run. " + strings.Repeat("ok ", 40),
		strings.Repeat("日本語のテキストも大丈夫。", 6),
	}
	var evs MemHistory
	var starts []int64
	total := 0
	for m := 0; total < size; m++ {
		sp := transcript.Speaker(1 + m%2)
		starts = append(starts, int64(len(evs)))
		for c := range chunksPerMessage {
			t := chunks[(m+c)%len(chunks)]
			evs = append(evs, transcript.Event{Speaker: sp, Kind: transcript.Message, Text: t})
			total += len(t)
		}
		evs = append(evs, transcript.Event{Speaker: sp, Kind: transcript.ToolCall, Text: "go test ./..."})
	}
	return evs, starts
}

// BenchmarkReadHistory reads one page (DefaultPageChars) per iteration of
// a 1 MB and a 100 MB conversation, at positions spread over the whole
// conversation, alternately oldest-first and newest-first. A page must
// cost the same whatever the size: compare ns/op and B/op of the two.
//
//	go test ./handoff/mcpserver -run '^$' -bench ReadHistory -benchmem
func BenchmarkReadHistory(b *testing.B) {
	for _, sz := range []struct {
		name string
		size int
	}{{"1MB", 1 << 20}, {"100MB", 100 << 20}} {
		evs, starts := benchHistory(sz.size)
		cursors := make([]string, 0, 64)
		for i := range 64 {
			cursors = append(cursors, pos{ev: starts[i*(len(starts)-1)/63]}.cursor())
		}
		lim := recap.Limits{Secrets: []string{"s3cr3t-staging-token-77"}}
		b.Run(sz.name, func(b *testing.B) {
			ctx := context.Background()
			red := recap.Cleaner(lim)
			b.ReportAllocs()
			chars := 0
			for i := 0; b.Loop(); i++ {
				dir := OldestFirst
				if i%2 == 1 {
					dir = NewestFirst
				}
				p, err := readHistory(ctx, evs, red, HistoryArgs{Cursor: cursors[i%len(cursors)], Direction: dir})
				if err != nil {
					b.Fatal(err)
				}
				chars += len(p.Text)
			}
			b.ReportMetric(float64(chars)/float64(b.N), "page-bytes")
		})
	}
}
