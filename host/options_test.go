package host

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/batonhq/baton"
)

// nopRuntime is a Runtime that is never asked to open anything.
type nopRuntime struct{}

func (nopRuntime) Open(context.Context, OpenRequest) (Session, error) {
	return nil, errors.New("nopRuntime opens nothing")
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	rt := nopRuntime{}
	tests := []struct {
		name string
		rt   Runtime
		opts Options
	}{
		{"nil runtime", nil, Options{}},
		{"negative generation", rt, Options{Generation: -1}},
		{"negative grace", rt, Options{Grace: -1}},
		{"negative sweep", rt, Options{Sweep: -1}},
		{"negative limit", rt, Options{MaxLineBytes: -1}},
		{"bad instance id", rt, Options{InstanceID: "a\x01b"}},
		{"relative claim dir", rt, Options{ClaimDir: "claims"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.rt, tt.opts)
			if !errors.Is(err, errInvalidOptions) || !errors.Is(err, baton.ErrInvalid) || h != nil {
				t.Fatalf("New = %v, %v; want an invalid-options error", h, err)
			}
		})
	}
	if _, err := os.Stat("claims"); err == nil {
		t.Error("a rejected New created its claim directory")
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	h, err := New(nopRuntime{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.opts.Grace != defaultGrace || defaultGrace.Milliseconds() != 600_000 || h.opts.Sweep != defaultSweep || h.opts.Generation != 1 || h.opts.InstanceID == "" {
		t.Errorf("defaults: %+v", h.opts)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Drain(""); !errors.Is(err, ErrClosed) {
		t.Errorf("Drain after Close = %v, want ErrClosed", err)
	}
}
