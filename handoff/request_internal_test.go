package handoff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/batonhq/baton"
)

// canonicalJSON is the definition of a request's canonical JSON, for any
// value: encoded with encoding/json (tags and omitempty apply), decoded
// into generic values and encoded again, which sorts object keys, writes
// no white space and keeps numbers as written.
func canonicalJSON(t *rapid.T, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

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
// canonicalJSON and its SHA-256 give for the normalised request:
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
			Share:           baton.Share(rapid.SampledFrom([]string{"", "conversation", "report", "none", " report "}).Draw(t, "share")),
			Target: baton.EngineConfig{
				Engine: drawText(t, "engine"), Model: drawText(t, "model"), ReasoningEffort: drawText(t, "effort"),
				PermissionMode: drawText(t, "mode"), Account: drawText(t, "account"),
			},
		}
		n := r.normalized()
		n.RequestID = ""
		want := canonicalJSON(t, n)
		if diff := cmp.Diff(string(want), string(n.canonical())); diff != "" {
			t.Fatalf("canonical JSON differs from canonicalJSON (-want +got):\n%s", diff)
		}
		sum := sha256.Sum256(want)
		if got, wantFP := r.fingerprint(), hex.EncodeToString(sum[:]); got != wantFP {
			t.Fatalf("Fingerprint = %s, the SHA-256 of canonicalJSON = %s", got, wantFP)
		}
	})
}
