package mcpserver_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
)

func TestConfigAndBridgeOptionsAreChecked(t *testing.T) {
	good := mcpserver.Access{Scope: mcpserver.ScopeReport, Workspace: "ws", Handoff: "hof", Token: baton.NewToken()}
	noToken := good
	noToken.Token = baton.Token{}
	tests := []struct {
		name string
		err  error
	}{
		{"bridge without URL", func() error { _, _, err := mcpserver.BridgeFromEnv(good.Environ("")); return err }()},
		{"bridge without token", func() error { _, _, err := mcpserver.BridgeFromEnv(noToken.Environ("http://127.0.0.1:1/")); return err }()},
		{"bridge with a file URL", func() error { _, _, err := mcpserver.BridgeFromEnv(good.Environ("file:///tmp/x")); return err }()},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, mcpserver.ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", tt.name, tt.err)
		}
	}
	endpoint, acc, err := mcpserver.BridgeFromEnv(append([]string{"OTHER=1"}, good.Environ("http://127.0.0.1:1/mcp")...))
	if err != nil || acc != good || endpoint != "http://127.0.0.1:1/mcp" {
		t.Fatalf("BridgeFromEnv = %q, %+v, %v", endpoint, acc, err)
	}
}

func TestHandlerRefusesRequestsWithoutAccessHeaders(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, h := range []http.Header{
		{},
		{"Authorization": {"Bearer " + baton.NewToken().Reveal()}}, // never read as an access
		{mcpserver.HeaderScope: {"report"}, mcpserver.HeaderWorkspace: {"ws"}, mcpserver.HeaderHandoff: {"hof"}},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("headers %v: status %d, want 400", h, resp.StatusCode)
		}
	}
}

func TestConnectRefusesAMalformedAccess(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	st, _ := mcp.NewInMemoryTransports()
	for _, a := range []mcpserver.Access{
		{},
		{Scope: mcpserver.ScopeTarget, Workspace: "ws", Token: baton.NewToken()},
		{Scope: "admin", Workspace: "ws", Handoff: "hof", Token: baton.NewToken()},
	} {
		if _, err := f.srv.Connect(f.ctx, st, a); !errors.Is(err, mcpserver.ErrAccessDenied) {
			t.Errorf("Connect(%+v) = %v, want ErrAccessDenied", a, err)
		}
	}
	if _, err := mcpserver.New(mcpserver.Config{}); !errors.Is(err, mcpserver.ErrBadConfig) {
		t.Errorf("New without a Coordinator = %v, want ErrBadConfig", err)
	}
}

// TestBearerTravelsWithTheAccess: a host's bearer token goes into the
// headers (Authorization) and the bridge's environment, and the bridge
// reads it back; without one, no Authorization header is sent.
func TestBearerTravelsWithTheAccess(t *testing.T) {
	a := mcpserver.Access{Scope: mcpserver.ScopeTarget, Workspace: "ws", Handoff: "hof", Token: baton.NewToken(), Bearer: baton.ParseToken("host-token")}
	if got := a.Header().Get("Authorization"); got != "Bearer host-token" {
		t.Errorf("Header Authorization = %q; want the bearer", got)
	}
	_, acc, err := mcpserver.BridgeFromEnv(a.Environ("http://127.0.0.1:1/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	if acc != a {
		t.Errorf("BridgeFromEnv(Environ(a)).Access = %+v; want %+v", acc, a)
	}
	a.Bearer = baton.Token{}
	if got := a.Header().Get("Authorization"); got != "" {
		t.Errorf("Header Authorization without a bearer = %q; want none", got)
	}
	for _, kv := range a.Environ("http://127.0.0.1:1/mcp") {
		if strings.HasPrefix(kv, mcpserver.EnvBearer+"=") {
			t.Errorf("Environ without a bearer holds %s", kv)
		}
	}
}
