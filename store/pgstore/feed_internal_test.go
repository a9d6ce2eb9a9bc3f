package pgstore

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// A change's record leaves out the record's zero fields and decodes to
// the record as the store keeps it (times in UTC to the microsecond),
// zero fields included.
func TestFeedRecordsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	cfg := baton.EngineConfig{Engine: "demo", Model: "m"}
	full := store.Handoff{ID: "h", Workspace: "ws", RequestID: "r", Fingerprint: "f", State: store.StateStarting, Attempt: 2,
		SourceSession: "s-1", TargetSession: "s-2", SourceConfig: cfg, TargetConfig: cfg, GenerateSummary: true, Native: true,
		Report: "rep", ReportPath: "/p", Facts: "facts", GenerationToken: baton.TokenHash{1, 2}, GenerationDeadline: at,
		Error: "e", StopRequested: true, StopUnconfirmed: true,
		History:   []store.AttemptRecord{{Attempt: 1, TargetSession: "s-0", Outcome: store.StateFailed, EndedAt: at}},
		CreatedAt: at, UpdatedAt: at}
	tests := []struct {
		name string
		kind string
		rec  any
		// absent are field names the encoding must leave out.
		absent []string
	}{
		{"full handoff", kindHandoff, full, nil},
		{"sparse handoff", kindHandoff, store.Handoff{ID: "h", Workspace: "ws", State: store.StateGenerating, CreatedAt: at},
			[]string{"fingerprint", "generationToken", "generationDeadline", "history", "updatedAt", "native"}},
		{"handoff with an empty history", kindHandoff, store.Handoff{ID: "h", History: []store.AttemptRecord{}}, nil},
		{"full session", kindSession, store.Session{ID: "s", Workspace: "ws", Config: cfg, NativeID: "n",
			Status: store.SessionStatus("running"), ActivationOrder: 3, StartedAt: at, EndedAt: at, EndReason: "x",
			CreatedAt: at, Seq: 9, RankAbove: "a", RankBelow: "b"}, nil},
		{"sparse session", kindSession, store.Session{ID: "s", Workspace: "ws", CreatedAt: at},
			[]string{"startedAt", "endedAt", "seq", "config"}},
		{"instruction", kindInstruction, store.Instruction{ID: "i", Workspace: "ws", Text: "t", CreatedAt: at},
			[]string{"sessionId", "updatedAt", "state"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, bodies := encodeFeed([]feedEntry{{key: recordKey{tt.kind, "id"}, rec: tt.rec}})
			for _, f := range tt.absent {
				if strings.Contains(string(bodies[0]), `"`+f+`"`) {
					t.Errorf("the record holds the zero field %s: %s", f, bodies[0])
				}
			}
			c := store.Change{Workspace: "ws", Seq: 1}
			if err := decodeChange(&c, tt.kind, bodies[0]); err != nil {
				t.Fatal(err)
			}
			var got, want any
			switch r := tt.rec.(type) {
			case store.Handoff:
				got, want = *c.Handoff, records.Handoff(r, records.Micro)
			case store.Session:
				got, want = *c.Session, records.Session(r, records.Micro)
			case store.Instruction:
				got, want = *c.Instruction, records.Instruction(r, records.Micro)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decoded record (-want +got):\n%s\nfrom %s", diff, bodies[0])
			}
		})
	}
}
