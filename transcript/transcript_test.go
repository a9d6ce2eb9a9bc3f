package transcript_test

import (
	"testing"

	"github.com/batonhq/baton/transcript"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		got  interface{ String() string }
		want string
	}{
		{transcript.User, "User"},
		{transcript.Agent, "Agent"},
		{transcript.Speaker(0), "Speaker(0)"},
		{transcript.Message, "Message"},
		{transcript.ToolCall, "ToolCall"},
		{transcript.Lifecycle, "Lifecycle"},
		{transcript.Note, "Note"},
		{transcript.Kind(9), "Kind(9)"},
	} {
		if s := tc.got.String(); s != tc.want {
			t.Errorf("String() = %q, want %q", s, tc.want)
		}
	}
}
