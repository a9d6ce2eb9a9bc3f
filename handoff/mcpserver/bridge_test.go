package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton/handoff/mcpserver"
)

// runBridge runs Bridge in this process between a client's pipes and url,
// and returns the client's transport and the bridge's result.
func runBridge(t *testing.T, url string, acc mcpserver.Access) (mcp.Transport, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()   // client -> bridge
	outR, outW := io.Pipe() // bridge -> client
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.Bridge(context.Background(), acc.Environ(url), inR, outW)
		_ = outW.Close()
	}()
	return &mcp.IOTransport{Reader: outR, Writer: inW}, done
}

func TestBridgeEndsWhenTheClientCloses(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	acc := f.srv.GrantTarget(f.ws, "hof-1")
	tr, done := runBridge(t, f.url, acc)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "v1"}, nil).Connect(f.ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, cs); len(got) != 2 {
		t.Fatalf("tools %v", got)
	}
	// A refusal crosses the bridge as a tool error, not a broken pipe.
	refusal(t, call(t, cs, mcpserver.ToolHistory, map[string]any{"direction": "up"}), "invalid")
	_ = cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Bridge = %v, want nil after the client closed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Bridge did not return after the client closed")
	}
}

func TestBridgeAnswersWhenTheHostIsDown(t *testing.T) {
	hs := httptest.NewServer(nil)
	url := hs.URL
	hs.Close() // nothing listens there any more
	f := newFixture(t, fixtureOpts{})
	tr, done := runBridge(t, url, f.srv.GrantTarget(f.ws, "hof-1"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "v1"}, nil).Connect(ctx, tr, nil)
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect through a bridge to a dead host = %v, want a prompt error", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Bridge did not return")
	}
}
