package exec_test

import (
	"context"
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
)

// TestStartRefusesFlagLikeValues: a configuration value that a CLI would
// read as a flag never reaches its command line, even through a direct
// Start that skipped validation.
func TestStartRefusesFlagLikeValues(t *testing.T) {
	p := shellProfile(trivialChild)
	p.Model, p.Effort, p.Permission = []string{"--model", "{model}"}, []string{"--effort", "{effort}"}, []string{"--permission", "{permission}"}
	e, err := exec.New(exec.Options{Profile: p, DataDir: t.TempDir(), StopGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	for _, cfg := range []baton.EngineConfig{
		{Engine: "sh", Model: "--dangerously-skip-permissions"},
		{Engine: "sh", ReasoningEffort: "-x"},
		{Engine: "sh", PermissionMode: "a b"},
	} {
		proc, err := e.Start(context.Background(), engine.StartRequest{Session: "s1", Prompt: "hi", Config: cfg})
		if proc != nil {
			_, _ = proc.Stop(context.Background())
		}
		if !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("Start with %+v: %v, want EINVALID", cfg, err)
		}
	}
}
