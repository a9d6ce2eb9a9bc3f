package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/google/go-cmp/cmp"
)

// stubEngine records what reaches it.
type stubEngine struct {
	name   string
	starts []engine.StartRequest
}

func (s *stubEngine) Start(_ context.Context, req engine.StartRequest) (engine.Process, error) {
	s.starts = append(s.starts, req)
	return nil, baton.Errorf(baton.ErrUnavailable, "stub %s", s.name)
}

// validatingEngine is a stubEngine with the Validator capability.
type validatingEngine struct {
	stubEngine
	seen []baton.EngineConfig
	err  error
}

func (v *validatingEngine) Validate(cfg baton.EngineConfig) error {
	v.seen = append(v.seen, cfg)
	return v.err
}

// TestRegistryNames: a configuration's engine is looked up as Normalize
// leaves it, case kept; a nil engine is not registered.
func TestRegistryNames(t *testing.T) {
	codex := &stubEngine{name: "codex"}
	r := engine.Registry{"codex": codex, "nil": nil}
	for name, want := range map[string]bool{"codex": true, "  codex\t": true, "nil": false, "Codex": false} {
		err := r.Validate(baton.EngineConfig{Engine: name})
		if (err == nil) != want {
			t.Errorf("Validate(%q) = %v, want registered %v", name, err, want)
		}
		if !want && !errors.Is(err, engine.ErrUnknownEngine) {
			t.Errorf("Validate(%q) = %v, want ErrUnknownEngine", name, err)
		}
		before := len(codex.starts)
		_, err = r.Start(context.Background(), engine.StartRequest{Config: baton.EngineConfig{Engine: name}})
		switch reached := len(codex.starts) > before; {
		case want && (!reached || errors.Is(err, engine.ErrUnknownEngine)):
			t.Errorf("Start(%q) = %v, reached codex %v; want it dispatched to codex", name, err, reached)
		case !want && (reached || !errors.Is(err, engine.ErrUnknownEngine)):
			t.Errorf("Start(%q) = %v, reached codex %v; want ErrUnknownEngine", name, err, reached)
		}
	}
}

func TestRegistryValidate(t *testing.T) {
	long := strings.Repeat("m", baton.MaxIDLen+1)
	tests := []struct {
		name      string
		cfg       baton.EngineConfig
		refuse    error // what the validating engine returns
		want      error
		notWant   error
		wantSeen  []baton.EngineConfig
		wantPlain bool // the engine without Validator
	}{
		{name: "no engine", cfg: baton.EngineConfig{Model: "m"}, want: baton.ErrInvalid, notWant: engine.ErrUnknownEngine},
		{name: "blank engine", cfg: baton.EngineConfig{Engine: "  "}, want: baton.ErrInvalid, notWant: engine.ErrUnknownEngine},
		{name: "field too long", cfg: baton.EngineConfig{Engine: "v", Model: long}, want: baton.ErrInvalid},
		{name: "unknown engine", cfg: baton.EngineConfig{Engine: "gpt"}, want: engine.ErrUnknownEngine, notWant: baton.ErrInvalid},
		{name: "engine without Validator accepts", cfg: baton.EngineConfig{Engine: "plain", Model: "anything"}, wantPlain: true},
		{name: "validator accepts, sees normalized config", cfg: baton.EngineConfig{Engine: " v ", Model: " m "},
			wantSeen: []baton.EngineConfig{{Engine: "v", Model: "m"}}},
		{name: "validator refuses", cfg: baton.EngineConfig{Engine: "v", Model: "huge"}, refuse: engine.ErrUnsupportedConfig,
			want: engine.ErrUnsupportedConfig, wantSeen: []baton.EngineConfig{{Engine: "v", Model: "huge"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &validatingEngine{err: tt.refuse}
			r := engine.Registry{"v": v, "plain": &stubEngine{}}
			err := r.Validate(tt.cfg)
			if tt.want == nil && err != nil {
				t.Fatalf("Validate = %v, want nil", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Validate = %v, want %v", err, tt.want)
			}
			if tt.notWant != nil && errors.Is(err, tt.notWant) {
				t.Errorf("Validate = %v, must not match %v", err, tt.notWant)
			}
			if diff := cmp.Diff(tt.wantSeen, v.seen); diff != "" {
				t.Errorf("validator saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegistryErrorCodes(t *testing.T) {
	r := engine.Registry(nil)
	if got := baton.ErrorCode(r.Validate(baton.EngineConfig{Engine: "x"})); got != baton.ErrUnsupported.Code {
		t.Errorf("unknown engine code = %q, want %q", got, baton.ErrUnsupported.Code)
	}
	if got := baton.ErrorCode(r.Validate(baton.EngineConfig{})); got != baton.ErrInvalid.Code {
		t.Errorf("malformed code = %q, want %q", got, baton.ErrInvalid.Code)
	}
}

func TestRegistryStartDispatches(t *testing.T) {
	a, b := &stubEngine{name: "a"}, &stubEngine{name: "b"}
	r := engine.Registry{"a": a, "b": b}
	var _ engine.Engine = r
	req := engine.StartRequest{Workspace: "w", Config: baton.EngineConfig{Engine: " b "}, Prompt: "p"}
	if _, err := r.Start(context.Background(), req); !errors.Is(err, baton.ErrUnavailable) || !strings.Contains(err.Error(), "stub b") {
		t.Errorf("Start = %v, want the b stub's error", err)
	}
	if diff := cmp.Diff([]engine.StartRequest{req}, b.starts); diff != "" {
		t.Errorf("b got (-want +got):\n%s", diff)
	}
	if len(a.starts) != 0 {
		t.Errorf("a got %d starts", len(a.starts))
	}
	req.Config.Engine = "c"
	if _, err := r.Start(context.Background(), req); !errors.Is(err, engine.ErrUnknownEngine) {
		t.Errorf("Start(unknown) = %v, want ErrUnknownEngine", err)
	}
	if len(a.starts)+len(b.starts) != 1 {
		t.Error("an unknown engine's start reached a registered engine")
	}
}

func TestStopOutcomeConfirmed(t *testing.T) {
	for o, want := range map[engine.StopOutcome]bool{
		engine.Stopped: true, engine.NotRunning: true, engine.Timeout: false, engine.Failed: false, "": false, "other": false,
	} {
		if got := o.Confirmed(); got != want {
			t.Errorf("%q.Confirmed() = %v, want %v", o, got, want)
		}
	}
}

func TestExitStatusClean(t *testing.T) {
	for _, tt := range []struct {
		e    engine.ExitStatus
		want bool
	}{
		{engine.ExitStatus{}, true},
		{engine.ExitStatus{Stopped: true}, true},
		{engine.ExitStatus{Code: 1}, false},
		{engine.ExitStatus{Err: errors.New("x")}, false},
	} {
		if got := tt.e.Clean(); got != tt.want {
			t.Errorf("%+v.Clean() = %v, want %v", tt.e, got, tt.want)
		}
	}
}
