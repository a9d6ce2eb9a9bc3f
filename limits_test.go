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
		field baton.Field
		v     string
		ok    bool
		says  string // in the error
	}{
		{baton.FieldName, strings.Repeat("n", 900_000), false, "name is over its limit: at most 200 characters"},
		{baton.FieldName, strings.Repeat("é", 200), true, ""},
		{baton.FieldName, "two\nlines", false, "name must be one line"},
		{baton.FieldName, "bad \xff\xfe bytes", false, "name is not valid UTF-8"},
		{baton.FieldName, "", true, ""},
		{baton.FieldMission, strings.Repeat("m", 1_000_000), false, "mission is over its limit: at most 20000 characters"},
		{baton.FieldMission, "line one\n\tline two", true, ""},
		{baton.FieldMission, "nul \x00 byte", false, "control character"},
		{baton.FieldPrompt, " \n ", false, "prompt is required"},
		{baton.FieldPrompt, strings.Repeat("p", baton.MaxPromptBytes+1), false, "1..200000 bytes"},
		{baton.FieldMessage, strings.Repeat("p", baton.MaxPromptBytes), true, ""},
		{baton.FieldReport, "  " + strings.Repeat("r", baton.MaxReportChars) + "  ", true, ""},
		{baton.FieldReport, strings.Repeat("r", baton.MaxReportChars+1), false, "1..24000 characters"},
		{baton.FieldModel, "--dangerously-skip-permissions", false, "must not start with '-'"},
		{baton.FieldModel, "opus 4", false, "white space"},
		{baton.FieldModel, "claude-opus-4", true, ""},
		{baton.FieldReasoningEffort, "-x", false, "must not start with '-'"},
		{baton.FieldPermissionMode, "plan\tx", false, "one line"},
		{baton.FieldEngine, "", false, "engine is required"},
		{baton.FieldRequestID, strings.Repeat("r", 129), false, "1..128 bytes"},
		{baton.FieldRoot, strings.Repeat("/d", 3000), false, "at most 4096 bytes"},
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
			t.Errorf("%s %.20q: %v, want EINVALID saying %q", c.field, c.v, err, c.says)
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
			t.Errorf("%+v: %v, want EINVALID", c, err)
		}
	}
	if err := (baton.EngineConfig{Engine: "claude", Model: "opus", ReasoningEffort: "high", PermissionMode: "plan"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func ExampleCheckField() {
	fmt.Println(baton.CheckField(baton.FieldModel, "--dangerously-skip-permissions"))
	fmt.Println(baton.CheckField(baton.FieldName, strings.Repeat("é", 201)))
	// Output:
	// baton: invalid: model must not start with '-' (it would read as a command-line flag)
	// baton: invalid: name is over its limit: at most 200 characters (got 201)
}
