package session

import (
	"context"

	"github.com/batonhq/baton/internal/workspace"
)

// supervisor is a Service as the transfer coordinator (package handoff)
// uses it: it launches and halts the processes of transfers through the
// Service's table of processes, reaps the launches of earlier processes
// and settles their records. Its methods are exported only to the
// interface package handoff declares, which reaches a Service's
// supervisor through the workspace.Link the Service embeds; no user of
// the module can name them.
type supervisor Service

// link carries a Service's supervisor (see workspace.Link); embedded under
// this unexported name, it adds no exported field to Service.
type link = workspace.Link

func (p *supervisor) svc() *Service { return (*Service)(p) }

func (s *Service) sup() *supervisor { return (*supervisor)(s) }

// Close is the Service's Close.
func (p *supervisor) Close(ctx context.Context) error { return p.svc().Close(ctx) }
