//go:build linux

package agent_test

import (
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// BenchmarkFor measures what wiring adds to a launch before the spawn: a
// report-only turn renders its configuration; any other turn lists the
// workspace's handoffs (memstore) to find the transfer it is the target
// of, and a target reuses its grant.
func BenchmarkFor(b *testing.B) {
	r, h := transferred(b)
	cred := &engine.ReportCredentials{Workspace: r.ws, Handoff: h.ID, Attempt: 1, Token: baton.NewToken()}
	for _, bc := range []struct {
		name string
		req  engine.StartRequest
		ok   bool
	}{
		{"report", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession, Turn: transcript.ReportOnly, Report: cred}, true},
		{"target", engine.StartRequest{Workspace: r.ws, Session: h.TargetSession}, true},
		{"ordinary", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok, err := r.w.For(r.ctx, bc.req); err != nil || ok != bc.ok {
					b.Fatalf("For = %v, %v", ok, err)
				}
			}
		})
	}
}
