package handoff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/fingerprint"
)

// drawText is a string that exercises JSON escaping: empty, plain, any
// runes (U+2028, U+2029 and U+FFFD included), control and HTML
// characters, quotes and backslashes, surrounding white space, or
// arbitrary bytes (invalid UTF-8).
func drawText(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.Just(""),
		rapid.StringMatching(`[a-z0-9_-]{1,12}`),
		rapid.String(),
		rapid.SampledFrom([]string{"<b>&amp;</b>", "\u2028\u2029", "a\"b\\c", "\x00\x01\b\f\n\r\t\x1f\x7f", "\ufffd", `\ufffd`, "  padded\t"}),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	).Draw(t, label)
}

// TestFingerprintIsCanonical checks that Fingerprint, which writes the
// canonical JSON of a request directly, gives the bytes and the hash that
// fingerprint.Canonical and fingerprint.Of give for the normalised request:
// a stored handoff's fingerprint must not change, or a replay of its
// request would be refused as a conflict.
func TestFingerprintIsCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := Request{
			Workspace:       baton.WorkspaceID(drawText(t, "workspace")),
			RequestID:       drawText(t, "requestID"),
			SourceSession:   baton.SessionID(drawText(t, "source")),
			GenerateSummary: rapid.Bool().Draw(t, "summary"),
			Native:          rapid.Bool().Draw(t, "native"),
			Target: baton.EngineConfig{
				Engine: drawText(t, "engine"), Model: drawText(t, "model"), ReasoningEffort: drawText(t, "effort"),
				PermissionMode: drawText(t, "mode"), Account: drawText(t, "account"),
			},
		}
		n := r.normalized()
		n.RequestID = ""
		want, err := fingerprint.Canonical(n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(n.canonical())); diff != "" {
			t.Fatalf("canonical JSON differs from fingerprint.Canonical (-want +got):\n%s", diff)
		}
		wantFP, err := fingerprint.Of(n)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Fingerprint(); got != wantFP {
			t.Fatalf("Fingerprint = %s, fingerprint.Of = %s", got, wantFP)
		}
	})
}
