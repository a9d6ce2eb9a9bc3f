package clock_test

import (
	"fmt"
	"time"

	"github.com/batonhq/baton/clock"
)

func ExampleFake() {
	f := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	timeout := f.After(30 * time.Second)

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
