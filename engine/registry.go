package engine

import (
	"context"
	"strings"

	"github.com/batonhq/baton"
)

// Registry maps engine names to engines. It is itself an Engine that
// dispatches on StartRequest.Config.Engine, so a Registry is what a
// session service or a coordinator takes when it runs more than one engine:
//
//	engine.Registry{"claude": claude, "codex": codex}
//
// A name is looked up as EngineConfig.Normalize leaves it (white space
// trimmed, case kept); a nil engine counts as absent. Build it before use
// and do not change it afterwards: it is then safe for concurrent use.
type Registry map[string]Engine

// Validate checks that cfg is well formed, names a registered engine, and,
// when that engine is a Validator, that the engine accepts it. Errors:
// baton.ErrInvalid (malformed), ErrUnknownEngine, ErrUnsupportedConfig.
func (r Registry) Validate(cfg baton.EngineConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.Normalize()
	e := r[cfg.Engine]
	if e == nil {
		return baton.Errorf(ErrUnknownEngine, "%q", cfg.Engine)
	}
	if v, ok := e.(Validator); ok {
		return v.Validate(cfg)
	}
	return nil
}

// Start dispatches to the engine named by req.Config.Engine.
func (r Registry) Start(ctx context.Context, req StartRequest) (Process, error) {
	e := r[strings.TrimSpace(req.Config.Engine)]
	if e == nil {
		return nil, baton.Errorf(ErrUnknownEngine, "%q", req.Config.Engine)
	}
	return e.Start(ctx, req)
}
