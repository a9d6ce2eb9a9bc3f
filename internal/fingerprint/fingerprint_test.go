package fingerprint

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type request struct {
	Workspace string            `json:"workspace"`
	Target    target            `json:"target"`
	Summary   bool              `json:"generateSummary"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type target struct {
	Engine string `json:"engine"`
	Model  string `json:"model,omitempty"`
}

// reordered has request's JSON shape with the fields declared in another
// order, as a second client might.
type reordered struct {
	Labels  map[string]string `json:"labels,omitempty"`
	Summary bool              `json:"generateSummary"`
	Target  struct {
		Model  string `json:"model,omitempty"`
		Engine string `json:"engine"`
	} `json:"target"`
	Workspace string `json:"workspace"`
}

func mustOf(t *testing.T, v any) string {
	t.Helper()
	fp, err := Of(v)
	if err != nil {
		t.Fatalf("Of(%#v): %v", v, err)
	}
	return fp
}

func TestFieldOrderNeverMatters(t *testing.T) {
	a := request{Workspace: "ws", Target: target{Engine: "claude", Model: "opus"}, Summary: true, Labels: map[string]string{"b": "2", "a": "1"}}
	var b reordered
	b.Labels = map[string]string{"a": "1", "b": "2"}
	b.Summary = true
	b.Target.Model, b.Target.Engine = "opus", "claude"
	b.Workspace = "ws"

	tests := []struct {
		name string
		x, y any
	}{
		{"structs declared in another order", a, b},
		{"struct and map", a, map[string]any{
			"target": map[string]any{"model": "opus", "engine": "claude"}, "workspace": "ws",
			"labels": map[string]any{"a": "1", "b": "2"}, "generateSummary": true,
		}},
		{"raw JSON in two key orders with white space", json.RawMessage(`{"b": [1, {"y":2,"x":1}], "a": "s"}`), json.RawMessage(`{ "a":"s","b":[1,{"x":1, "y":2}] }`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if x, y := mustOf(t, tt.x), mustOf(t, tt.y); x != y {
				cx, _ := Canonical(tt.x)
				cy, _ := Canonical(tt.y)
				t.Errorf("fingerprints differ:\n%s\n%s", cx, cy)
			}
		})
	}
}

func TestDifferingContentDiffers(t *testing.T) {
	base := request{Workspace: "ws", Target: target{Engine: "claude", Model: "opus"}, Summary: true}
	variants := map[string]func(r *request){
		"workspace":   func(r *request) { r.Workspace = "ws2" },
		"engine":      func(r *request) { r.Target.Engine = "codex" },
		"model":       func(r *request) { r.Target.Model = "" },
		"summary":     func(r *request) { r.Summary = false },
		"extra label": func(r *request) { r.Labels = map[string]string{"a": "1"} },
	}
	want := mustOf(t, base)
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			r := base
			change(&r)
			if got := mustOf(t, r); got == want {
				t.Errorf("changing %s kept fingerprint %s", name, got)
			}
		})
	}
	// Numbers keep their exact value: 1 and 1.5, and two integers that a
	// float64 would round together, differ.
	if mustOf(t, map[string]any{"n": 1}) == mustOf(t, map[string]any{"n": 1.5}) {
		t.Error("1 and 1.5 agree")
	}
	if mustOf(t, map[string]any{"n": int64(1 << 60)}) == mustOf(t, map[string]any{"n": int64(1<<60 + 1)}) {
		t.Error("2^60 and 2^60+1 agree")
	}
}

func TestCanonicalForm(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"sorted keys, nested", map[string]any{"z": 1, "a": map[string]any{"y": true, "b": nil}}, `{"a":{"b":null,"y":true},"z":1}`},
		{"struct tags and omitempty", request{Workspace: "w", Target: target{Engine: "e"}}, `{"generateSummary":false,"target":{"engine":"e"},"workspace":"w"}`},
		{"no HTML escaping, no white space", json.RawMessage("{ \"s\" : \"<a&b>\" ,\n \"l\": [ 1 , 2 ] }"), `{"l":[1,2],"s":"<a&b>"}`},
		{"exact numbers", json.RawMessage(`{"big":12345678901234567890,"f":1.50}`), `{"big":12345678901234567890,"f":1.50}`},
		{"scalar", "x", `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Canonical (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGolden pins the fingerprint of a fixed input: a change here changes
// every stored request fingerprint, so replays after an upgrade would be
// refused as idempotency mismatches.
func TestGolden(t *testing.T) {
	in := request{Workspace: "ws-1", Target: target{Engine: "claude", Model: "opus"}, Summary: true, Labels: map[string]string{"k": "v"}}
	const wantCanonical = `{"generateSummary":true,"labels":{"k":"v"},"target":{"engine":"claude","model":"opus"},"workspace":"ws-1"}`
	const want = "750a43cd0467dd8acdf5d8c6045520359d716c66ce3d6d6e9c5bc92bca704861"
	c, err := Canonical(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(c) != wantCanonical {
		t.Fatalf("Canonical = %s, want %s", c, wantCanonical)
	}
	if got := mustOf(t, in); got != want {
		t.Errorf("Of = %s, want %s", got, want)
	}
}

func TestUnencodable(t *testing.T) {
	for name, v := range map[string]any{"channel": make(chan int), "NaN": math.NaN()} {
		t.Run(name, func(t *testing.T) {
			var ue *json.UnsupportedTypeError
			var uv *json.UnsupportedValueError
			_, err := Of(v)
			if !errors.As(err, &ue) && !errors.As(err, &uv) {
				t.Errorf("Of(%s) error = %v, want a json unsupported type/value error", name, err)
			}
		})
	}
}
