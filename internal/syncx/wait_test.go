package syncx

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestWait(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, &wg); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled ctx and a busy group = %v", err)
	}
	wg.Done()
	if err := Wait(context.Background(), &wg); err != nil {
		t.Fatalf("Wait on a finished group = %v", err)
	}
}
