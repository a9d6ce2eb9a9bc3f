package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
)

// bridgeFromEnv reads the bridge's endpoint, the URL of the host's
// Handler, and the access it sends with every request from environ (see
// Bridge). Errors: ErrBadConfig when a variable is missing or the URL is
// not an http URL.
func bridgeFromEnv(environ []string) (string, Access, error) {
	get := func(k string) string { return envLookup(environ, k) }
	endpoint, a := get(envURL), accessFrom(get, envScope, envWorkspace, envHandoff, envToken)
	a.Bearer = baton.ParseToken(get(envBearer))
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", Access{}, baton.Errorf(ErrBadConfig, "%s must be the http URL of the host's MCP endpoint", envURL)
	}
	if err := a.valid(); err != nil {
		return "", Access{}, baton.Errorf(ErrBadConfig, "%v (set %s, %s, %s and %s)", err, envScope, envWorkspace, envHandoff, envToken)
	}
	return endpoint, a, nil
}

// Bridge serves MCP over in and out (os.Stdin and os.Stdout when nil),
// newline-delimited JSON-RPC as an agent CLI speaks it to a stdio server,
// and forwards every message to the host's streamable HTTP endpoint with
// the access of one turn, relaying the answers back. It reads the endpoint
// and the access from environ ("NAME=value", as os.Environ gives it):
// BATON_MCP_URL, BATON_MCP_SCOPE, BATON_MCP_WORKSPACE, BATON_MCP_HANDOFF,
// BATON_MCP_TOKEN and BATON_MCP_BEARER, which Access.Environ writes. A host
// calls it from a subcommand of its own binary, which the CLI's MCP
// configuration launches, or ships the command cmd/baton-mcp-bridge, which
// runs it.
//
// The bridge keeps no state of its own besides the negotiated protocol
// version, which it sends in the MCP-Protocol-Version header. Messages are
// forwarded one at a time, in order. It returns nil when in reaches its
// end (the CLI closed the server), ctx's error when ctx ends, or the
// error that broke either side. Errors: ErrBadConfig when a variable is
// missing or the URL is not an http URL (nothing was read from in then).
// No goroutine outlives it.
func Bridge(ctx context.Context, environ []string, in io.ReadCloser, out io.WriteCloser) error {
	endpoint, access, err := bridgeFromEnv(environ)
	if err != nil {
		return err
	}
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = nopCloser{os.Stdout}
	}
	b := &bridge{access: access}
	local, err := (&mcp.IOTransport{Reader: in, Writer: out}).Connect(ctx)
	if err != nil {
		return err
	}
	remote, err := (&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: b}, DisableStandaloneSSE: true, MaxRetries: -1}).Connect(ctx)
	if err != nil {
		_ = local.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- b.pump(ctx, local, remote, true) }()
	go func() { errs <- b.pump(ctx, remote, local, false) }()
	err = <-errs
	cancel()
	_ = local.Close()
	_ = remote.Close()
	<-errs // the other pump has returned
	if errors.Is(err, io.EOF) {
		return nil
	}
	if ctx.Err() != nil && err != nil && errors.Is(err, context.Canceled) {
		return context.Cause(ctx)
	}
	return err
}

type bridge struct {
	access Access

	mu      sync.Mutex
	initID  jsonrpc.ID
	version string
}

// pump copies messages from one side to the other until a read fails. On
// the way up it notes the id of the initialize request; on the way down it
// reads the protocol version the server chose from its answer.
func (b *bridge) pump(ctx context.Context, from, to mcp.Connection, up bool) error {
	for {
		msg, err := from.Read(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if up && m.Method == "initialize" {
				b.mu.Lock()
				b.initID = m.ID
				b.mu.Unlock()
			}
		case *jsonrpc.Response: // the answer to initialize names the version
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			b.mu.Lock()
			if !up && b.initID.IsValid() && m.ID == b.initID && m.Result != nil && json.Unmarshal(m.Result, &r) == nil {
				b.version = r.ProtocolVersion
			}
			b.mu.Unlock()
		}
		if err := to.Write(ctx, msg); err != nil {
			// A refused POST fails this one call: answer it so the CLI is
			// not left waiting, and go on.
			if r, ok := msg.(*jsonrpc.Request); up && ok && r.IsCall() {
				werr := from.Write(ctx, &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "baton bridge: " + err.Error()}})
				if werr == nil && ctx.Err() == nil {
					continue
				}
			}
			return err
		}
	}
}

// RoundTrip makes b the bridge's HTTP transport: it adds the Access
// headers and the protocol version to every request.
func (b *bridge) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	maps.Copy(r.Header, b.access.Header())
	b.mu.Lock()
	v := b.version
	b.mu.Unlock()
	if v != "" && r.Header.Get("Mcp-Protocol-Version") == "" {
		r.Header.Set("Mcp-Protocol-Version", v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
