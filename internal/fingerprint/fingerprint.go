// Package fingerprint computes request fingerprints: the SHA-256 of the
// canonical JSON of a normalised request. Canonical means object keys sorted
// and no insignificant white space, so two clients that send the same request
// with fields in another order agree. Callers fill defaults before calling.
//
// It is the definition of a fingerprint, for any value: handoff.Request,
// whose shape is fixed, writes the same bytes directly
// (Request.Fingerprint, without the decode and encode again), and its test
// compares the two on random requests, so a stored fingerprint never
// changes meaning.
package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Of returns the hex SHA-256 of the canonical JSON encoding of v. v is first
// encoded with encoding/json (so struct tags and omitempty apply), then
// decoded into generic values and re-encoded with sorted keys.
func Of(v any) (string, error) {
	b, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical returns the canonical JSON of v.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	// encoding/json sorts map keys and writes no white space; json.Number
	// keeps numbers exactly as written.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
