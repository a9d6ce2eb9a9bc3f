package exec

import (
	"github.com/batonhq/baton/engine"
)

// refine is the proc.Command.Refine of a launch: the sentinel a readiness
// failure also matches after what the child said (called with Mu held).
func (p *process) refine() error {
	switch {
	case p.missing:
		return engine.ErrSessionMissing
	case p.auth:
		return engine.ErrAuth
	}
	return nil
}

// stopUnready ends a launch whose readiness failed: it gives the child the
// stop grace to exit by itself (a CLI that refused its turn usually does),
// then stops it.
func (p *process) stopUnready() {
	p.e.reg.WG.Add(1)
	go func() {
		defer p.e.reg.WG.Done()
		t := p.Clock().NewTimer(p.e.opts.StopGrace)
		defer t.Stop()
		select {
		case <-p.Done():
			return
		case <-t.C():
		}
		p.stop()
	}()
}
