// Package syncx holds the one concurrency helper two packages share.
package syncx

import (
	"context"
	"sync"
)

// Wait waits for wg until ctx is done; it returns ctx's error if ctx ended
// first (the goroutine waiting on wg then ends when wg does).
func Wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
