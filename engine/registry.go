package engine

import (
	"context"
	"sort"
	"strings"

	"github.com/batonhq/baton"
)

// Registry maps engine names to engines. It is itself an Engine that
// dispatches on StartRequest.Config.Engine. Build it once, before use; it is
// read-only afterwards and safe for concurrent use.
type Registry struct {
	byName map[string]Engine
}

// NewRegistry returns a registry of the named engines. A nil engine or an
// empty name is ignored.
func NewRegistry(engines map[string]Engine) *Registry {
	r := &Registry{byName: make(map[string]Engine, len(engines))}
	for name, e := range engines {
		name = strings.TrimSpace(name)
		if name != "" && e != nil {
			r.byName[name] = e
		}
	}
	return r
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the engine registered under name.
func (r *Registry) Lookup(name string) (Engine, bool) {
	e, ok := r.byName[strings.TrimSpace(name)]
	return e, ok
}

// Validate checks that cfg is well formed, names a registered engine, and,
// when that engine is a Validator, that the engine accepts it. Errors:
// baton.ErrInvalid (malformed), ErrUnknownEngine, ErrUnsupportedConfig.
func (r *Registry) Validate(cfg baton.EngineConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	e, ok := r.Lookup(cfg.Engine)
	if !ok {
		return baton.Errorf(ErrUnknownEngine, "%q", cfg.Normalize().Engine)
	}
	if v, ok := e.(Validator); ok {
		return v.Validate(cfg.Normalize())
	}
	return nil
}

// Start dispatches to the engine named by req.Config.Engine.
func (r *Registry) Start(ctx context.Context, req StartRequest) (Process, error) {
	e, ok := r.Lookup(req.Config.Engine)
	if !ok {
		return nil, baton.Errorf(ErrUnknownEngine, "%q", req.Config.Engine)
	}
	return e.Start(ctx, req)
}
