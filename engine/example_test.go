package engine_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
)

func ExampleRegistry() {
	demo := enginetest.New(enginetest.Options{
		Validate: func(cfg baton.EngineConfig) error {
			if cfg.Model != "demo-1" {
				return baton.Errorf(engine.ErrUnsupportedConfig, "model %q", cfg.Model)
			}
			return nil
		},
	})
	defer demo.Close()
	r := engine.Registry{"demo": demo}

	fmt.Println(r.Validate(baton.EngineConfig{Engine: "demo", Model: "demo-1"}))
	fmt.Println(errors.Is(r.Validate(baton.EngineConfig{Engine: "demo", Model: "big"}), engine.ErrUnsupportedConfig))
	fmt.Println(errors.Is(r.Validate(baton.EngineConfig{Engine: "codex"}), engine.ErrUnknownEngine))
	fmt.Println(errors.Is(r.Validate(baton.EngineConfig{}), baton.ErrInvalid))

	ctx := context.Background()
	p, err := r.Start(ctx, engine.StartRequest{Workspace: "ws", Config: baton.EngineConfig{Engine: "demo", Model: "demo-1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	id, err := p.Ready(ctx)
	fmt.Println(id, err)
	outcome, _ := p.Stop(ctx)
	fmt.Println(outcome, outcome.Confirmed(), p.Exit().Stopped)
	// Output:
	// <nil>
	// true
	// true
	// true
	// native-1 <nil>
	// stopped true true
}
