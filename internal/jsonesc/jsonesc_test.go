package jsonesc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/batonhq/baton/internal/jsonesc"
)

func Example() {
	fmt.Println(string(jsonesc.AppendCanonical(nil, "a<b\n")))
	// Output:
	// "a<b\n"
}

// AppendCanonical writes encoding/json's bytes, for any string, invalid UTF-8 and
// the characters it escapes included.
func TestMatchesEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pieces := rapid.SliceOf(rapid.SampledFrom([]string{
			"a", "é", "\x00", "\x1f", "\"", "\\", "<", ">", "&", "\u2028", "\u2029", "\xff", "\xe2\x82", "\n", "\t", "😀", " ",
		})).Draw(t, "pieces")
		s := ""
		for _, p := range pieces {
			s += p
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		// Canonical: decoded (invalid bytes become U+FFFD) and encoded again
		// without HTML escaping.
		var round string
		if err := json.Unmarshal(want, &round); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(round); err != nil {
			t.Fatal(err)
		}
		if got, want := jsonesc.AppendCanonical(nil, s), bytes.TrimRight(buf.Bytes(), "\n"); !bytes.Equal(got, want) {
			t.Fatalf("AppendCanonical(%q) = %s, want %s", s, got, want)
		}
	})
}
