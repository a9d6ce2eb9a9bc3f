package acp_test

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/transcript"
)

func TestPermission(t *testing.T) {
	allow := []string{"submit_session_handoff"}
	for _, tc := range []struct {
		name  string
		turn  transcript.Turn
		mode  string
		kind  sdk.ToolKind
		title string
		input any
		want  bool
	}{
		{"read in a report-only turn", transcript.ReportOnly, "", sdk.ToolKindRead, "Read a.go", nil, true},
		{"the report tool by its title", transcript.ReportOnly, "", sdk.ToolKindOther, "mcp__baton__submit_session_handoff", nil, true},
		{"the report tool by another server's separator", transcript.ReportOnly, "", sdk.ToolKindOther, "baton/submit_session_handoff", nil, true},
		{"the report tool by its raw input", transcript.ReportOnly, "", sdk.ToolKindOther, "Tool", map[string]any{"tool": "submit_session_handoff"}, true},
		{"a name that only ends like the tool", transcript.ReportOnly, "", sdk.ToolKindOther, "evilsubmit_session_handoff", nil, false},
		{"an edit in a report-only turn, whatever the mode", transcript.ReportOnly, "bypassPermissions", sdk.ToolKindEdit, "Write a.go", nil, false},
		{"an edit in default mode", transcript.Normal, "default", sdk.ToolKindEdit, "Write a.go", nil, false},
		{"an edit with acceptEdits", transcript.Normal, "acceptEdits", sdk.ToolKindEdit, "Write a.go", nil, true},
		{"a command with acceptEdits", transcript.Normal, "acceptEdits", sdk.ToolKindExecute, "ls", nil, false},
		{"a command with bypassPermissions", transcript.Normal, "bypassPermissions", sdk.ToolKindExecute, "ls", nil, true},
		{"a command in plan mode", transcript.Normal, "plan", sdk.ToolKindExecute, "ls", nil, false},
	} {
		kind, title := tc.kind, tc.title
		req := engine.StartRequest{Turn: tc.turn, Config: baton.EngineConfig{Engine: "acp", PermissionMode: tc.mode}}
		r := sdk.RequestPermissionRequest{ToolCall: sdk.ToolCallUpdate{ToolCallId: "c", Kind: &kind, Title: &title, RawInput: tc.input}}
		if got := acp.Permission(req, allow, r); got != tc.want {
			t.Errorf("%s: Permission = %v; want %v", tc.name, got, tc.want)
		}
	}
}
