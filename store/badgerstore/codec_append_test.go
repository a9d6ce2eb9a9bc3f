package badgerstore

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/batonhq/baton/store"
)

// drawString is a string that exercises encoding/json's escaping: plain
// text, any runes (U+2028 and U+2029 included), control characters,
// HTML characters, invalid UTF-8, or empty.
func drawString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.Just(""),
		rapid.StringMatching(`[a-z0-9_-]{1,12}`),
		rapid.String(),
		rapid.SampledFrom([]string{"<b>&amp;</b>", "\u2028\u2029", "a\"b\\c", "\x00\x01\b\f\n\r\t\x1f\x7f", "\ufffd", `\ufffd`}),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	).Draw(t, label)
}

// drawTime is the zero time, or an instant in or out of the years json
// accepts, in UTC or in a zone (whole or odd offsets).
func drawTime(t *rapid.T, label string) time.Time {
	if rapid.Bool().Draw(t, label+"/zero") {
		return time.Time{}
	}
	sec := rapid.Int64Range(-70_000_000_000, 300_000_000_000).Draw(t, label+"/sec")
	tm := time.Unix(sec, rapid.Int64Range(0, 999_999_999).Draw(t, label+"/nsec"))
	if rapid.Bool().Draw(t, label+"/utc") {
		return tm.UTC()
	}
	return tm.In(time.FixedZone("z", rapid.IntRange(-30*3600, 30*3600).Draw(t, label+"/offset")))
}

// drawInto sets every field of the value v points to (recursively) at
// random, so that a field the hand encoder forgets, also one added
// later, fails the comparison.
func drawInto(t *rapid.T, v reflect.Value, label string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(drawString(t, label))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, label))
	case reflect.Int, reflect.Int64:
		v.SetInt(rapid.OneOf(rapid.Just(int64(0)), rapid.Int64()).Draw(t, label))
	case reflect.Uint64:
		v.SetUint(rapid.Uint64().Draw(t, label))
	case reflect.Uint8:
		v.SetUint(uint64(rapid.Byte().Draw(t, label)))
	case reflect.Array:
		zero := rapid.Bool().Draw(t, label+"/zero")
		for i := range v.Len() {
			if !zero {
				drawInto(t, v.Index(i), label)
			}
		}
	case reflect.Slice:
		n := rapid.IntRange(0, 3).Draw(t, label+"/len")
		if n == 0 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			drawInto(t, v.Index(i), label)
		}
	case reflect.Pointer:
		// changeV1's record pointers: left nil (the head of a feed entry).
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(drawTime(t, label)))
			return
		}
		if rapid.IntRange(0, 9).Draw(t, label+"/zero") == 0 {
			return // a zero struct (omitzero)
		}
		for i := range v.NumField() {
			drawInto(t, v.Field(i), label+"."+v.Type().Field(i).Name)
		}
	default:
		t.Fatalf("drawInto: unhandled kind %s of %s", v.Kind(), v.Type())
	}
}

func drawRecord[V any](t *rapid.T) V {
	var v V
	for i := range reflect.ValueOf(&v).Elem().NumField() {
		f := reflect.ValueOf(&v).Elem().Field(i)
		drawInto(t, f, reflect.TypeFor[V]().Field(i).Name)
	}
	return v
}

// TestAppendMatchesMarshal checks the hand encoder against encoding/json
// on random records: the same bytes, or a refusal where json.Marshal
// fails (a time outside the years 0-9999, a zone json cannot write),
// which encode then reports through json.Marshal.
func TestAppendMatchesMarshal(t *testing.T) {
	check := func(t *rapid.T, v any) {
		want, werr := json.Marshal(v)
		got, ok := appendRecord(nil, v)
		switch {
		case werr != nil && ok:
			t.Fatalf("json.Marshal fails (%v), the hand encoder wrote %s", werr, got)
		case werr == nil && !ok:
			t.Fatalf("the hand encoder refused what json.Marshal writes: %s", want)
		case ok:
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Fatalf("hand encoder differs from json.Marshal (-want +got):\n%s", diff)
			}
		}
		enc, err := encode(v)
		if (err != nil) != (werr != nil) || (err == nil && string(enc) != string(want)) {
			t.Fatalf("encode = %s, %v; json.Marshal = %s, %v", enc, err, want, werr)
		}
	}
	for _, tt := range []struct {
		name string
		draw func(*rapid.T) any
	}{
		{"handoff", func(t *rapid.T) any { return drawRecord[handoffV1](t) }},
		{"session", func(t *rapid.T) any { return drawRecord[sessionV1](t) }},
		{"workspace", func(t *rapid.T) any { return drawRecord[workspaceV1](t) }},
		{"reservation", func(t *rapid.T) any { return drawRecord[reservationV1](t) }},
		{"launch", func(t *rapid.T) any { return drawRecord[launchV1](t) }},
		{"change head", func(t *rapid.T) any { return drawRecord[changeV1](t) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { check(t, tt.draw(t)) })
		})
	}
}

// TestAppendLeavesOthersToJSON checks that records without a hand
// encoding, and a feed entry with its record, are not claimed by it.
func TestAppendLeavesOthersToJSON(t *testing.T) {
	s := toSession(store.Session{ID: "s", Workspace: "w"})
	for _, v := range []any{
		wakeupV1{ID: "k"}, continuationV1{ID: "c"}, instructionV1{ID: "i"}, &s,
		changeV1{Workspace: "w", Kind: store.ChangeSession, Session: &s},
	} {
		if b, ok := appendRecord(nil, v); ok {
			t.Errorf("appendRecord(%T) = %s, want it left to encoding/json", v, b)
		}
	}
}
