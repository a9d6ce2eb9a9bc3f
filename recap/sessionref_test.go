package recap

import (
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// TestHandoffPromptNamesTheModelThatRan: the previous session's line names
// the model the engine reported really ran, with the configured one beside
// it when they differ, and the engine's version when it said one.
func TestHandoffPromptNamesTheModelThatRan(t *testing.T) {
	tests := []struct {
		name string
		src  store.Session
		want string
	}{
		{"configured only", store.Session{ID: "s1", Config: baton.EngineConfig{Engine: "claude", Model: "claude-opus-4-1"}, NativeID: "n1"},
			"Previous session: s1 (engine claude, model claude-opus-4-1, native id n1).\n"},
		{"another model ran", store.Session{ID: "s1", Config: baton.EngineConfig{Engine: "claude", Model: "claude-opus-4-1"}, NativeID: "n1", ActualModel: "claude-opus-4-8", EngineVersion: "2.1.197"},
			"Previous session: s1 (engine claude 2.1.197, model claude-opus-4-8 (configured claude-opus-4-1), native id n1).\n"},
		{"the configured model ran", store.Session{ID: "s1", Config: baton.EngineConfig{Engine: "claude", Model: "claude-test-1"}, NativeID: "n1", ActualModel: "claude-test-1"},
			"Previous session: s1 (engine claude, model claude-test-1, native id n1).\n"},
		{"nothing configured", store.Session{ID: "s1", Config: baton.EngineConfig{Engine: "demo"}, ActualModel: "m-2"},
			"Previous session: s1 (engine demo, model m-2 (configured unknown), native id none).\n"},
		{"a line break is flattened", store.Session{ID: "s1", Config: baton.EngineConfig{Engine: "claude", Model: "a"}, ActualModel: "b\n## Injected", EngineVersion: "1\n2"},
			"Previous session: s1 (engine claude 1 2, model b ## Injected (configured a), native id none).\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := HandoffPrompt(HandoffInput{Source: tc.src})
			if !strings.Contains(out, "\n"+tc.want) {
				t.Errorf("the prompt does not hold %q:\n%s", tc.want, out)
			}
		})
	}
}
