package exec

import (
	"context"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
)

// resolveLocked settles readiness once; it reports whether it did.
func (p *process) resolveLocked(id string, err error) bool {
	if p.readyResolved {
		return false
	}
	p.readyResolved, p.readyID, p.readyErr = true, id, err
	close(p.readyCh)
	return true
}

// readyFailure builds a readiness error on base, refined by what the
// child said.
func (p *process) readyFailure(base *baton.Error, detail string) error {
	switch {
	case p.missing:
		return proc.ReadyFailure(base, detail, engine.ErrSessionMissing)
	case p.auth:
		return proc.ReadyFailure(base, detail, engine.ErrAuth)
	}
	return proc.ReadyFailure(base, detail)
}

// watchReady enforces the readiness timeout.
func (p *process) watchReady(t clock.Timer) {
	defer p.e.wg.Done()
	defer t.Stop()
	select {
	case <-p.readyCh:
		return
	case <-p.done:
		return
	case <-t.C():
	}
	p.mu.Lock()
	resolved := p.resolveLocked("", p.readyFailure(engine.ErrReadyRejected, fmt.Sprintf("no readiness within %s", engine.ReadyTimeoutOf(p.req))))
	p.mu.Unlock()
	if resolved {
		_, _ = p.Stop(context.Background())
	}
}

// stopUnready ends a launch whose readiness failed: it gives the child the
// stop grace to exit by itself (a CLI that refused its turn usually does),
// then stops it.
func (p *process) stopUnready() {
	p.e.wg.Add(1)
	go func() {
		defer p.e.wg.Done()
		t := p.clk.NewTimer(p.e.opts.StopGrace)
		defer t.Stop()
		select {
		case <-p.done:
			return
		case <-t.C():
		}
		_, _ = p.Stop(context.Background())
	}()
}
