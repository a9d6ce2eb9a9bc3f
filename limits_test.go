package baton_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/batonhq/baton"
)

// TestCheckField: every field of the table refuses what breaks its limit
// or rule, naming the field and the limit, and accepts what keeps them.
func TestCheckField(t *testing.T) {
	cases := []struct {
		field string
		v     string
		ok    bool
		says  string // in the error
	}{
		{"name", strings.Repeat("n", 900_000), false, "name is over its limit: at most 200 characters"},
		{"name", strings.Repeat("é", 200), true, ""},
		{"name", "two\nlines", false, "name must be one line"},
		{"name", "bad \xff\xfe bytes", false, "name is not valid UTF-8"},
		{"name", "", true, ""},
		{"mission", strings.Repeat("m", 1_000_000), false, "mission is over its limit: at most 20000 characters"},
		{"mission", "line one\n\tline two", true, ""},
		{"mission", "nul \x00 byte", false, "control character"},
		{"prompt", " \n ", false, "prompt is required"},
		{"prompt", strings.Repeat("p", baton.MaxPromptBytes+1), false, "1..200000 bytes"},
		{"message", strings.Repeat("p", baton.MaxPromptBytes), true, ""},
		{"report", "  " + strings.Repeat("r", baton.MaxReportChars) + "  ", true, ""},
		{"report", strings.Repeat("r", baton.MaxReportChars+1), false, "1..24000 characters"},
		{"model", "--dangerously-skip-permissions", false, "must not start with '-'"},
		{"model", "opus 4", false, "white space"},
		{"model", "claude-opus-4", true, ""},
		{"reasoningEffort", "-x", false, "must not start with '-'"},
		{"permissionMode", "plan\tx", false, "one line"},
		{"engine", "", false, "engine is required"},
		{"requestId", strings.Repeat("r", 129), false, "1..128 bytes"},
		{"root", strings.Repeat("/d", 3000), false, "at most 4096 bytes"},
		{"unknown", "x", false, "unknown field"},
	}
	for _, c := range cases {
		err := baton.CheckField(c.field, c.v)
		if c.ok {
			if err != nil {
				t.Errorf("%s %.20q: %v, want nil", c.field, c.v, err)
			}
			continue
		}
		if !errors.Is(err, baton.ErrInvalid) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %.20q: %v, want ErrInvalid saying %q", c.field, c.v, err, c.says)
		}
	}
}

// TestEngineConfigRefusesFlags: no configuration value reaches a CLI as a
// flag of its own.
func TestEngineConfigRefusesFlags(t *testing.T) {
	for _, c := range []baton.EngineConfig{
		{Engine: "claude", Model: "--dangerously-skip-permissions"},
		{Engine: "claude", ReasoningEffort: "--yolo"},
		{Engine: "claude", PermissionMode: "bypass permissions"},
		{Engine: "claude", Account: "a\x1bb"},
		{Engine: "-claude"},
	} {
		if err := c.Validate(); !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", c, err)
		}
	}
	if err := (baton.EngineConfig{Engine: "claude", Model: "opus", ReasoningEffort: "high", PermissionMode: "plan"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func ExampleCheckField() {
	fmt.Println(baton.CheckField("model", "--dangerously-skip-permissions"))
	fmt.Println(baton.CheckField("name", strings.Repeat("é", 201)))
	// Output:
	// baton: invalid: model must not start with '-' (it would read as a command-line flag)
	// baton: invalid: name is over its limit: at most 200 characters (got 201)
}
