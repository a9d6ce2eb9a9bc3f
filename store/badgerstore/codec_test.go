package badgerstore

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fill sets every field of the struct v points to (recursively) to a value
// distinct from its zero value and from the other fields, so that a codec
// that drops or swaps a field fails the round trip. n numbers the values.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + string(rune('A'+*n%26)) + string(rune('a'+*n/26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * -3)
	case reflect.Uint8:
		v.SetUint(uint64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) / 64)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			// Nanoseconds and a zone: kept as the same instant.
			zone := time.FixedZone("z", *n*60)
			v.Set(reflect.ValueOf(time.Date(2000+*n, 1, 2, 3, 4, 5, *n*1001, zone)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String() + " of " + v.Type().String())
	}
}

func filled[T any]() T {
	var r T
	n := 0
	fill(reflect.ValueOf(&r).Elem(), &n)
	return r
}

// roundTrip encodes through the wire struct and decodes back.
func roundTrip[R, W any](t *testing.T, in R, to func(R) W, back func(W) R) R {
	t.Helper()
	b, err := encode(to(in))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var w W
	if err := decode(b, &w); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return back(w)
}

// sameInstants compares times with Equal, as the store contract says.
var sameInstants = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

// TestCodecKeepsEveryField catches a field of package store that the wire
// structs forget, also one added after this package was written.
func TestCodecKeepsEveryField(t *testing.T) {
	check := func(name string, in, out any) {
		t.Helper()
		if d := cmp.Diff(in, out, sameInstants); d != "" {
			t.Errorf("%s changed in a round trip (-in +out):\n%s", name, d)
		}
	}
	ws := filled[store.Workspace]()
	check("Workspace", ws, roundTrip(t, ws, toWorkspace, workspaceRow.record))
	s := filled[store.Session]()
	check("Session", s, roundTrip(t, s, toSession, sessionRow.record))
	h := filled[store.Handoff]()
	check("Handoff", h, roundTrip(t, h, func(h store.Handoff) handoffRow { return toHandoff(h, 7) }, handoffRow.record))
	r := filled[store.Reservation]()
	check("Reservation", r, roundTrip(t, r, toReservation, reservationRow.record))
	w := filled[store.Wakeup]()
	check("Wakeup", w, roundTrip(t, w, toWakeup, wakeupRow.record))
	c := filled[store.Continuation]()
	check("Continuation", c, roundTrip(t, c, func(c store.Continuation) continuationRow { return toContinuation(c, 7) }, continuationRow.record))
	l := filled[store.Launch]()
	check("Launch", l, roundTrip(t, l, func(l store.Launch) launchRow { return toLaunch(l, 7) }, launchRow.record))
	i := filled[store.Instruction]()
	check("Instruction", i, roundTrip(t, i, func(i store.Instruction) instructionRow { return toInstruction(i, 7) }, instructionRow.record))
	for _, ch := range []store.Change{
		{Workspace: "ws", Seq: 3, Handoff: &h},
		{Workspace: "ws", Seq: 4, Session: &s},
		{Workspace: "ws", Seq: 5, Instruction: &i},
	} {
		var out store.Change
		if err := decode(storedChange(ch), &out); err != nil {
			t.Fatal(err)
		}
		check("Change of a "+changeKind(ch), ch, out)
	}
}

// changeKind names the record a change carries.
func changeKind(c store.Change) string {
	switch {
	case c.Handoff != nil:
		return "handoff"
	case c.Session != nil:
		return "session"
	}
	return "instruction"
}

// storedChange is a change as flushChanges stores it: the record's stored
// JSON spliced in.
func storedChange(c store.Change) json.RawMessage {
	var rec any
	field := changeKind(c)
	switch {
	case c.Handoff != nil:
		rec = toHandoff(*c.Handoff, 1)
	case c.Session != nil:
		rec = toSession(*c.Session)
	case c.Instruction != nil:
		rec = toInstruction(*c.Instruction, 1)
	}
	body, err := encode(rec)
	if err == nil {
		c.Handoff, c.Session, c.Instruction = nil, nil, nil
		body, err = encodeChange(c, field, body)
	}
	if err != nil {
		panic(err)
	}
	return body
}

func TestCodecZeroRecords(t *testing.T) {
	b, err := encode(toHandoff(store.Handoff{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	// Zero fields are left out, zero times included.
	if want := `{"id":"","workspaceId":"","requestId":"","seq":0}`; string(b) != want {
		t.Errorf("zero handoff encodes as %s, want %s", b, want)
	}
	var h handoffRow
	if err := decode(b, &h); err != nil {
		t.Fatal(err)
	}
	if got := h.record(); !got.CreatedAt.IsZero() || got.History != nil || got.GenerationToken != (store.Handoff{}).GenerationToken {
		t.Errorf("zero handoff decodes as %+v", got)
	}
}

func TestCodecRefusesBadValues(t *testing.T) {
	if _, err := encode(toWorkspace(store.Workspace{ID: "w", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})); err == nil {
		t.Error("a time in year 10000 encoded")
	}
	var h handoffRow
	if err := decode([]byte(`{"generationToken":"abc"}`), &h); err == nil {
		t.Error("a short token hash decoded")
	}
}

// TestGoldenRecords pins the on-disk encoding: a change to it must show up
// as a diff of testdata/records.golden.json (go test -update rewrites it)
// and comes with a new formatVersion if old directories would misread.
func TestGoldenRecords(t *testing.T) {
	records := map[string]any{
		"workspace":    toWorkspace(filled[store.Workspace]()),
		"session":      toSession(filled[store.Session]()),
		"handoff":      toHandoff(filled[store.Handoff](), 7),
		"reservation":  toReservation(filled[store.Reservation]()),
		"wakeup":       toWakeup(filled[store.Wakeup]()),
		"continuation": toContinuation(filled[store.Continuation](), 7),
		"launch":       toLaunch(filled[store.Launch](), 7),
		"instruction":  toInstruction(filled[store.Instruction](), 7),
		"change": func() json.RawMessage {
			i := filled[store.Instruction]()
			return storedChange(store.Change{Workspace: "ws", Seq: 5, Instruction: &i})
		}(),
	}
	got, err := json.MarshalIndent(records, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "records.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("encoding changed (-golden +now):\n%s", cmp.Diff(string(want), string(got)))
	}
}

// TestEncodeChangeIsMarshal checks that a feed entry spliced from its
// record's stored JSON decodes as the change itself.
func TestEncodeChangeIsMarshal(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 5, time.UTC)
	h := store.Handoff{ID: "h-1", Workspace: "ws-<&>", RequestID: "r", State: store.StateStarting,
		Report: "and <b>", History: []store.AttemptRecord{{Attempt: 1, Outcome: store.StateFailed, EndedAt: now}},
		CreatedAt: now}
	s := store.Session{ID: "s-1", Workspace: "ws-a", Status: store.SessionRunning, CreatedAt: now, Seq: 3}
	i := store.Instruction{ID: "i-1", Workspace: "ws-a", Text: "do \"this\"", CreatedAt: now}
	for _, c := range []store.Change{
		{Workspace: h.Workspace, Seq: 41, Handoff: &h},
		{Workspace: s.Workspace, Seq: 1, Session: &s},
		{Workspace: i.Workspace, Seq: 1 << 40, Instruction: &i},
	} {
		var got store.Change
		if err := decode(storedChange(c), &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("%s: the stored change differs (-want +got):\n%s", changeKind(c), diff)
		}
	}
}
