package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/batonhq/baton/clock"
)

func ExampleFake() {
	f := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	timeout := f.NewTimer(30 * time.Second).C()

	f.Advance(29 * time.Second)
	select {
	case <-timeout:
		fmt.Println("fired early")
	default:
		fmt.Println("not yet")
	}
	f.Advance(time.Second)
	fmt.Println((<-timeout).Format(time.TimeOnly))
	// Output:
	// not yet
	// 00:00:30
}

// A timeout counted from a stored time (here, when a record was
// committed) is armed for that point in time: however far the clock has
// moved by the time the timer is armed, it fires at the deadline.
func ExampleWithDeadline() {
	f := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	committed := f.Now()
	f.Advance(10 * time.Second) // the work that arms the timeout ran late

	ctx, cancel := clock.WithDeadline(context.Background(), f, committed.Add(time.Minute))
	defer cancel()
	f.Advance(50 * time.Second)
	select {
	case <-ctx.Done():
		fmt.Println(f.Now().Sub(committed), context.Cause(ctx) == context.DeadlineExceeded)
	case <-time.After(5 * time.Second): // wall time: the context is cancelled on a goroutine
		fmt.Println("not cancelled at the deadline")
	}
	// Output:
	// 1m0s true
}
