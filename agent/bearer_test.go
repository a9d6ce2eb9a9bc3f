//go:build linux

package agent_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// TestBearerOneDoor: with Config.Bearer, the Handler refuses a request
// without the bearer token (401) and serves one with it.
func TestBearerOneDoor(t *testing.T) {
	bearer := baton.ParseToken("the-hosts-own-token")
	h, err := agent.New(memstore.New(), agent.Config{Addr: "127.0.0.1:8417", DataDir: t.TempDir(), Claude: &exec.ClaudeOptions{}, Bearer: bearer})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(testCtx(t, 30*time.Second))
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, tc := range []struct {
		name, auth string
		refused    bool
	}{
		{"no token", "", true},
		{"a wrong token", "Bearer not-the-token", true},
		{"the token without its scheme", "the-hosts-own-token", true},
		{"the token", "Bearer the-hosts-own-token", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, agent.MCPPath, strings.NewReader(list))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.Handler().ServeHTTP(rec, req)
			if got := rec.Code == http.StatusUnauthorized; got != tc.refused {
				t.Errorf("status %d (%s); want refused=%v", rec.Code, strings.TrimSpace(rec.Body.String()), tc.refused)
			}
		})
	}
}

// TestBearerInConfigurations: every wired launch carries the host's
// bearer token beside its own credentials: Claude Code in its MCP
// configuration's headers, Codex as an env_http_headers entry whose value
// is in the environment (never on the command line).
func TestBearerInConfigurations(t *testing.T) {
	bearer := baton.ParseToken("the-hosts-own-token")
	w, err := agent.NewWiring(agent.Config{Addr: "127.0.0.1:1", Bearer: bearer})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	cred := &engine.ReportCredentials{Workspace: "ws", Handoff: "h1", Attempt: 1, Token: baton.NewToken()}
	req := engine.StartRequest{Workspace: "ws", Session: "s1", Turn: transcript.ReportOnly, Report: cred}
	l, ok, err := w.For(ctx, req)
	if !ok || err != nil {
		t.Fatalf("For = %v, %v", ok, err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(l.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	hdr := cfg.MCPServers["baton"].Headers
	if hdr["Authorization"] != "Bearer the-hosts-own-token" || hdr["X-Baton-Token"] != cred.Token.Reveal() {
		t.Errorf("Claude's headers = %v; want the bearer and the turn's token", hdr)
	}

	extra, err := w.Codex(exec.CodexOptions{}).LaunchExtra(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	flags := strings.Join(extra.Flags, " ")
	if strings.Contains(flags, "the-hosts-own-token") {
		t.Errorf("the bearer token is on Codex's command line: %s", flags)
	}
	if !strings.Contains(flags, `"Authorization"="`+agent.EnvAuthorization+`"`) {
		t.Errorf("Codex's flags name no Authorization header from %s: %s", agent.EnvAuthorization, flags)
	}
	want := agent.EnvAuthorization + "=Bearer the-hosts-own-token"
	found := false
	for _, kv := range extra.Env {
		found = found || kv == want
	}
	if !found {
		t.Errorf("Codex's environment %v lacks %s", extra.Env, want)
	}

	// Without a bearer, nothing of it is sent.
	plain, err := agent.NewWiring(agent.Config{Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if l, _, _ := plain.For(ctx, req); strings.Contains(string(l.Config), "Authorization") {
		t.Errorf("a configuration without a bearer names Authorization: %s", l.Config)
	}
}
