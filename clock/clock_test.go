package clock

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fired reports which of the channels hold a value now, without blocking,
// and what each received.
func fired(t *testing.T, timers map[string]Timer) map[string]time.Time {
	t.Helper()
	got := map[string]time.Time{}
	for name, tm := range timers {
		select {
		case at := <-tm.C():
			got[name] = at
		default:
		}
	}
	return got
}

func TestFakeTimersFireOnAdvanceInDeadlineOrder(t *testing.T) {
	f := NewFake(start)
	timers := map[string]Timer{
		"3s": f.NewTimer(3 * time.Second),
		"1s": f.NewTimer(time.Second),
		"2s": f.NewTimer(2 * time.Second),
	}
	steps := []struct {
		advance time.Duration
		want    map[string]time.Time
		pending int
	}{
		{999 * time.Millisecond, map[string]time.Time{}, 3},
		{time.Millisecond, map[string]time.Time{"1s": start.Add(time.Second)}, 2},
		{5 * time.Second, map[string]time.Time{"2s": start.Add(2 * time.Second), "3s": start.Add(3 * time.Second)}, 0},
		{time.Hour, map[string]time.Time{}, 0},
	}
	for i, s := range steps {
		f.Advance(s.advance)
		if diff := cmp.Diff(s.want, fired(t, timers)); diff != "" {
			t.Errorf("step %d: fired (-want +got):\n%s", i, diff)
		}
		if got := f.Pending(); got != s.pending {
			t.Errorf("step %d: Pending = %d, want %d", i, got, s.pending)
		}
	}
	if got, want := f.Now(), start.Add(time.Hour+6*time.Second); !got.Equal(want) {
		t.Errorf("Now = %v, want %v", got, want)
	}
}

func TestFakeStopPreventsFiring(t *testing.T) {
	f := NewFake(start)
	stopped := f.NewTimer(time.Second)
	kept := f.NewTimer(time.Second)
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer = false")
	}
	if stopped.Stop() {
		t.Error("second Stop = true")
	}
	f.Advance(time.Second)
	if diff := cmp.Diff(map[string]time.Time{"kept": start.Add(time.Second)}, fired(t, map[string]Timer{"stopped": stopped, "kept": kept})); diff != "" {
		t.Errorf("fired (-want +got):\n%s", diff)
	}
	if kept.Stop() {
		t.Error("Stop of a fired timer = true")
	}
}

func TestFakeNonPositiveDurationFiresAtOnce(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		f := NewFake(start)
		select {
		case at := <-f.NewTimer(d).C():
			if !at.Equal(start) {
				t.Errorf("a timer of %v sent %v, want %v", d, at, start)
			}
		default:
			t.Errorf("a timer of %v did not fire at once", d)
		}
		tm := f.NewTimer(d)
		if tm.Stop() {
			t.Errorf("NewTimer(%v).Stop() = true, want false (already fired)", d)
		}
		if f.Pending() != 0 {
			t.Errorf("NewTimer(%v) left a pending timer", d)
		}
	}
}

func TestFakeAdvanceNeverGoesBack(t *testing.T) {
	f := NewFake(start)
	tm := f.NewTimer(time.Minute)
	f.Advance(-time.Hour)
	if !f.Now().Equal(start) {
		t.Fatalf("Now = %v after moving back, want %v", f.Now(), start)
	}
	f.Advance(time.Minute)
	if len(fired(t, map[string]Timer{"t": tm})) != 1 {
		t.Error("Advance to the deadline did not fire the timer")
	}
	var zero Fake
	if !zero.Now().IsZero() {
		t.Errorf("zero Fake Now = %v, want the zero time", zero.Now())
	}
}

func TestFakeWaitTimers(t *testing.T) {
	f := NewFake(start)
	isClosed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	if !isClosed(f.WaitTimers(0)) {
		t.Error("WaitTimers(0) not closed at once")
	}
	w1, w2 := f.WaitTimers(1), f.WaitTimers(2)
	if isClosed(w1) || isClosed(w2) {
		t.Fatal("closed before any timer")
	}
	f.NewTimer(0) // fires at once, never pending
	if isClosed(w1) {
		t.Fatal("an already fired timer counted as pending")
	}
	f.NewTimer(time.Second)
	if !isClosed(w1) || isClosed(w2) {
		t.Fatalf("after one timer: w1 closed %v (want true), w2 closed %v (want false)", isClosed(w1), isClosed(w2))
	}

	// The usual use: wait until another goroutine has armed its timeout.
	got := make(chan time.Time)
	armed := f.WaitTimers(2)
	go func() { got <- <-f.NewTimer(time.Minute).C() }()
	<-armed
	f.Advance(time.Minute)
	if at := <-got; !at.Equal(start.Add(time.Minute)) {
		t.Errorf("goroutine's timer sent %v", at)
	}
	if !isClosed(w2) {
		t.Error("w2 not closed after the second timer")
	}
}

func TestRealSmoke(t *testing.T) {
	var c Clock = Real{}
	before := time.Now()
	if now := c.Now(); now.Before(before) {
		t.Errorf("Now %v before %v", now, before)
	}
	<-c.NewTimer(time.Millisecond).C()
	tm := c.NewTimer(time.Hour)
	if !tm.Stop() {
		t.Error("Stop of a pending real timer = false")
	}
	tm = c.NewTimer(time.Millisecond)
	<-tm.C()
	if tm.Stop() {
		t.Error("Stop of a fired real timer = true")
	}
}

func TestFakePendingBy(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	f.NewTimer(time.Second)
	f.NewTimer(time.Hour)
	if got := f.PendingBy(f.Now().Add(time.Minute)); got != 1 {
		t.Fatalf("PendingBy(+1m) = %d, want 1", got)
	}
	if got := f.PendingBy(f.Now().Add(time.Hour)); got != 2 {
		t.Fatalf("PendingBy(+1h) = %d, want 2", got)
	}
}

func TestWithTimeoutFollowsTheClock(t *testing.T) {
	f := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := WithTimeout(context.Background(), f, time.Minute)
	defer cancel()
	<-f.WaitTimers(1)
	f.Advance(59 * time.Second)
	if ctx.Err() != nil || context.Cause(ctx) == context.DeadlineExceeded {
		t.Fatalf("ended before its time: %v", ctx.Err())
	}
	f.Advance(time.Second)
	<-ctx.Done()
	if context.Cause(ctx) != context.DeadlineExceeded {
		t.Fatalf("cause = %v, want a timeout", context.Cause(ctx))
	}

	ctx2, cancel2 := WithTimeout(context.Background(), f, time.Minute)
	cancel2()
	<-ctx2.Done()
	if context.Cause(ctx2) == context.DeadlineExceeded {
		t.Fatal("a cancelled context reported a timeout")
	}
}

// TestNewTimerAtIsExact is the race NewTimerAt exists for: a deadline
// computed from a stored time, armed after the clock moved. Armed as
// NewTimer(deadline.Sub(now)) with the now read before the move, it fires
// a move late; NewTimerAt fires at the deadline itself.
func TestNewTimerAtIsExact(t *testing.T) {
	f := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	deadline := f.Now().Add(90 * time.Second)

	relative := deadline.Sub(f.Now()) // read, then the clock moves
	f.Advance(10 * time.Second)
	late := f.NewTimer(relative)
	exact := NewTimerAt(f, deadline)
	f.Advance(80 * time.Second) // now == deadline
	select {
	case at := <-exact.C():
		if !at.Equal(deadline) {
			t.Fatalf("fired for %v, want %v", at, deadline)
		}
	default:
		t.Fatal("NewTimerAt did not fire at its deadline")
	}
	select {
	case <-late.C():
		t.Fatal("the relative timer fired at the deadline: the test shows no race")
	default:
	}

	past := NewTimerAt(f, deadline.Add(-time.Second))
	select {
	case <-past.C():
	default:
		t.Fatal("a timer for a time already passed has not fired")
	}
	if past.Stop() {
		t.Fatal("Stop of a timer that fired = true")
	}
}

// plainClock hides Fake's NewTimerAt: the fallback path.
type plainClock struct{ f *Fake }

func (c plainClock) Now() time.Time                 { return c.f.Now() }
func (c plainClock) NewTimer(d time.Duration) Timer { return c.f.NewTimer(d) }

func TestNewTimerAtWithoutAtClock(t *testing.T) {
	f := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var c Clock = plainClock{f}
	if _, ok := c.(interface{ NewTimerAt(time.Time) Timer }); ok {
		t.Fatal("plainClock has NewTimerAt")
	}
	tm := NewTimerAt(c, f.Now().Add(time.Minute))
	f.Advance(59 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("fired early")
	default:
	}
	f.Advance(time.Second)
	<-tm.C()
}

func TestWithDeadline(t *testing.T) {
	f := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	deadline := f.Now().Add(time.Minute)
	f.Advance(30 * time.Second)
	ctx, cancel := WithDeadline(context.Background(), f, deadline)
	defer cancel()
	f.Advance(29 * time.Second)
	if ctx.Err() != nil {
		t.Fatalf("ended before its deadline: %v", ctx.Err())
	}
	f.Advance(time.Second)
	<-ctx.Done()
	if context.Cause(ctx) != context.DeadlineExceeded {
		t.Fatalf("cause = %v, want a timeout", context.Cause(ctx))
	}

	gone, cancel2 := WithDeadline(context.Background(), f, deadline)
	defer cancel2()
	<-gone.Done() // its deadline has passed: done at once
	if context.Cause(gone) != context.DeadlineExceeded {
		t.Fatalf("cause = %v, want a timeout", context.Cause(gone))
	}
}
