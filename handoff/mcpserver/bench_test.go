package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// BenchmarkSubmitReport measures a report submitted over MCP until it is
// stored (the call returns after the Coordinator's commit), on badgerstore
// with durable commits, against its floor measured in the same iterations:
// a bare MCP round trip of a no-op tool over the same transport, plus one
// raw durable commit of the same store. Each iteration prepares a handoff
// in its report turn and fresh client sessions (warmed with tools/list)
// with the timer stopped. Metrics: submit-µs, floor-µs (noop-µs +
// commit-µs) and ratio = submit/floor. Run it with a fixed count, for
// example:
//
//	go test ./handoff/mcpserver -run '^$' -bench SubmitReport -benchtime 200x
func BenchmarkSubmitReport(b *testing.B) {
	for _, kind := range []string{"http", "stdio"} {
		b.Run(kind, func(b *testing.B) { benchSubmit(b, kind) })
	}
}

func benchSubmit(b *testing.B, kind string) {
	st, err := badgerstore.Open(b.TempDir(), badgerstore.Options{Small: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	f := newFixture(b, fixtureOpts{st: st})

	// The floor's no-op tool, served the way the baton endpoint is.
	noop := mcp.NewServer(&mcp.Implementation{Name: "noop", Version: "v1"}, nil)
	noop.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return noop },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	b.Cleanup(hs.Close)
	floorWS := baton.WorkspaceID("ws-floor")
	f.workspace(b, floorWS)

	ctx := context.Background()
	var submit, rtt, commit time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		ws := baton.WorkspaceID(fmt.Sprintf("ws-b%d", i))
		src := f.workspace(b, ws)
		h, proc, acc := f.reportTurn(b, ws, src.ID)
		cs := f.connect(b, kind, acc)
		fl := dialNoop(b, kind, hs.URL, acc)
		toolNames(b, cs) // warm both sessions alike
		toolNames(b, fl)

		t0 := time.Now()
		if res := call(b, fl, "noop", nil); res.IsError {
			b.Fatal(resultText(res))
		}
		t1 := time.Now()
		if err := st.Update(ctx, func(tx store.Tx) error {
			w, err := tx.GetWorkspace(floorWS)
			if err != nil {
				return err
			}
			w.UpdatedAt = time.Now()
			return tx.PutWorkspace(w)
		}); err != nil {
			b.Fatal(err)
		}
		t1c := time.Now()
		b.StartTimer()
		t2 := time.Now()
		res := call(b, cs, mcpserver.ToolSubmit, map[string]any{"report": "# Report\n\nAll checks passed."})
		t3 := time.Now()
		b.StopTimer()
		if res.IsError {
			b.Fatal(resultText(res))
		}
		rtt += t1.Sub(t0)
		commit += t1c.Sub(t1)
		submit += t3.Sub(t2)

		_ = cs.Close()
		_ = fl.Close()
		proc.Finish(0, nil)
		f.waitState(b, ws, h.ID, store.StateCompleted)
	}
	n := float64(b.N)
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
	b.ReportMetric(us(submit), "submit-µs")
	b.ReportMetric(us(rtt), "noop-µs")
	b.ReportMetric(us(commit), "commit-µs")
	b.ReportMetric(us(rtt+commit), "floor-µs")
	b.ReportMetric(float64(submit)/float64(rtt+commit), "ratio")
}

// dialNoop opens a client session to the no-op endpoint over kind: HTTP
// with the same headers, or a bridge process of its own.
func dialNoop(b *testing.B, kind, url string, acc mcpserver.Access) *mcp.ClientSession {
	b.Helper()
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: headerClient(acc.Header()), DisableStandaloneSSE: true, MaxRetries: -1}
	if kind == "stdio" {
		tr = bridgeTransport(url, acc)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "floor", Version: "v1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}
