package main

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

func TestHTTPError(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{baton.Errorf(handoff.ErrIdempotencyMismatch, "r"), 409, "idempotency-mismatch"},
		{handoff.ErrTransferPending, 409, "transfer-pending"},
		{handoff.ErrSourceChanged, 409, "source-changed"},
		{handoff.ErrTransferRunning, 409, "transfer-running"},
		{handoff.ErrStopUnconfirmed, 409, "stop-unconfirmed"},
		{handoff.ErrTokenRejected, 409, "generation-inactive"},
		{handoff.ErrGenerationInactive, 409, "generation-inactive"},
		{handoff.ErrReportConflict, 409, "report-conflict"},
		{fmt.Errorf("wrapped: %w", session.ErrWorkspaceBusy), 409, "workspace-busy"},
		{baton.Errorf(handoff.ErrNotFound, "x"), 404, "not-found"},
		{store.ErrNotFound, 404, "not-found"},
		{fmt.Errorf("%w: %w", handoff.ErrInvalidRequest, engine.ErrUnknownEngine), 400, "invalid-request"},
		{engine.ErrUnknownEngine, 400, "invalid-request"},
		{engine.ErrReadyRejected, 502, "engine-failed"},
		{session.ErrClosed, 503, "unavailable"},
		{errors.New("boom"), 500, "internal"},
		{&apiError{http.StatusRequestEntityTooLarge, "too-large", "big"}, 413, "too-large"},
	} {
		status, code := httpError(c.err)
		if status != c.status || code != c.code {
			t.Errorf("httpError(%v) = %d %s, want %d %s", c.err, status, code, c.status, c.code)
		}
	}
}

func TestMachineEdges(t *testing.T) {
	edges := machineEdges(handoff.MachineGraph())
	seen := map[string]bool{}
	for _, e := range edges {
		if _, ok := statePos[e.from]; !ok {
			t.Errorf("edge from unplaced state %q", e.from)
		}
		if _, ok := statePos[e.to]; !ok {
			t.Errorf("edge to unplaced state %q", e.to)
		}
		seen[e.from+">"+e.to] = true
	}
	for _, want := range []string{"new>stopping", "stopping>generating", "generating>starting", "starting>completed"} {
		if !seen[want] {
			t.Errorf("no edge %s in %v", want, edges)
		}
	}
}
