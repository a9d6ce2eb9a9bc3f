package proc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
)

// StopAll stops every process of ps at once, each a confirmed stop within
// ctx, and returns the errors of those whose stop was not confirmed, each
// naming its launch (launch returns it).
func StopAll[P engine.Process](ctx context.Context, ps []P, launch func(P) baton.LaunchID) error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() {
			if o, err := p.Stop(ctx); !o.Confirmed() {
				mu.Lock()
				errs = append(errs, fmt.Errorf("launch %s: %s: %v", launch(p), o, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
