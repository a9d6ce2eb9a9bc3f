package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

// The names the tests use for the server's internals.
type (
	MemHistory  = memHistory
	Direction   = direction
	HistoryArgs = historyArgs
	Entry       = entry
	Page        = page
	Refusal     = refusal
	Submitted   = submitted
)

const (
	ToolSubmit       = toolSubmit
	ToolFacts        = toolFacts
	OldestFirst      = oldestFirst
	NewestFirst      = newestFirst
	DefaultPageChars = defaultPageChars
	MinPageChars     = minPageChars
	MaxPageChars     = maxPageChars
	MaxMessageBytes  = maxMessageBytes
	HeaderScope      = headerScope
	HeaderWorkspace  = headerWorkspace
	HeaderHandoff    = headerHandoff
	HeaderToken      = headerToken
	EnvBearer        = envBearer
	DefaultName      = defaultName
)

var (
	ErrAccessDenied  = errAccessDenied
	ErrBadArguments  = errBadArguments
	AccessFromHeader = accessFromHeader
)

// ReadHistory returns one page of h as read_source_history renders it,
// redacted with lim.
func ReadHistory(ctx context.Context, h History, lim recap.Limits, args HistoryArgs) (Page, error) {
	return readHistory(ctx, h, recap.Cleaner(lim), args)
}

// Connect serves one MCP session for a over t (one end of
// mcp.NewInMemoryTransports), listing the tools of a.Scope, as Handler
// would over HTTP. Errors: ErrAccessDenied for a malformed Access.
func (s *Server) Connect(ctx context.Context, t mcp.Transport, a Access) (*mcp.ServerSession, error) {
	if err := a.valid(); err != nil {
		return nil, err
	}
	srv := s.mcpServer(a.Scope, func(*mcp.CallToolRequest) (Access, error) { return a, nil })
	return srv.Connect(ctx, t, nil)
}

// memHistory is a History held in memory.
type memHistory []transcript.Event

// Len implements History.
func (h memHistory) Len(context.Context) (int64, error) { return int64(len(h)), nil }

// Events implements History. The slice it returns shares h's memory.
func (h memHistory) Events(_ context.Context, from int64, n int) ([]transcript.Event, error) {
	if from < 0 || n < 0 {
		return nil, baton.Errorf(baton.ErrInvalid, "events from %d, n %d", from, n)
	}
	if from >= int64(len(h)) {
		return nil, nil
	}
	return h[from:min(int64(len(h)), from+int64(n))], nil
}

// BridgeFromEnv is the endpoint and access Bridge reads from its environment.
var BridgeFromEnv = bridgeFromEnv
