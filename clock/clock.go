// Package clock is baton's injectable time source.
//
// # Basics
//
// Every baton component that waits takes a Clock (session.Options.Clock,
// which a handoff.Coordinator uses too; enginetest.Options.Clock); Real,
// the wall clock, is the default. Tests pass a *Fake and move time by hand with Advance, so no
// test sleeps to reach a generation timeout or a lease expiry. Timers of a
// Fake fire during Advance, in deadline order.
//
// # Caveats
//
// A Fake never moves on its own: code that arms a timer and a test that
// advances the clock must agree on when the timer is armed (PendingBy
// tells a test how many timers are due within a horizon).
//
// A deadline that is a point in time (a timeout counted from a stored
// commit time, say) is armed with NewTimerAt or WithDeadline, not by
// passing t.Sub(c.Now()) to NewTimer: between reading Now and arming, a
// Fake may move, and the timer would fire that much late.
package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is the time source every baton component uses.
type Clock interface {
	Now() time.Time
	// NewTimer returns a stoppable timer.
	NewTimer(d time.Duration) Timer
}

// NewTimerAt returns a timer of c that fires once c reaches t. When c has
// a method NewTimerAt(time.Time) Timer (a Fake does) the timer is armed
// with it, for t exactly however c moves meanwhile; with any other Clock it
// is NewTimer(t.Sub(c.Now())), which for the wall clock is the same to
// within the time the call takes. A Clock of a caller's may have the method
// too: its timer must fire once the clock reaches t (at once when t is not
// after Now).
func NewTimerAt(c Clock, t time.Time) Timer {
	if a, ok := c.(interface{ NewTimerAt(time.Time) Timer }); ok {
		return a.NewTimerAt(t)
	}
	return c.NewTimer(t.Sub(c.Now()))
}

// Timer is a stoppable one-shot timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer(d).
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// realTimer is a *time.Timer with its channel behind a method.
type realTimer struct{ *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.Timer.C }

// Fake is a manual clock for tests. Its time moves only by Advance; timers
// whose deadline is reached fire during that call, in deadline order.
// The zero value is usable and starts at the zero time.Time; NewFake picks
// the start. A Fake starts no goroutine.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	waiters []timerWaiter
}

// timerWaiter is a WaitTimers call still waiting for n pending timers.
type timerWaiter struct {
	n  int
	ch chan struct{}
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the clock reaches Now()+d. With
// d <= 0 it has fired already: its channel holds Now() and Stop reports false.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armLocked(f.now.Add(d))
}

// NewTimerAt returns a timer that fires when the clock reaches at. With at
// not after Now() it has fired already: its channel holds Now() and Stop
// reports false.
func (f *Fake) NewTimerAt(at time.Time) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armLocked(at)
}

func (f *Fake) armLocked(at time.Time) *fakeTimer {
	t := &fakeTimer{f: f, at: at, c: make(chan time.Time, 1)}
	if !at.After(f.now) {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	f.waiters = slices.DeleteFunc(f.waiters, func(w timerWaiter) bool {
		if len(f.timers) < w.n {
			return false
		}
		close(w.ch)
		return true
	})
	return t
}

// Advance moves the clock forward by d and fires every timer that is due.
// A negative d does nothing: the fake clock never moves backwards.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	slices.SortStableFunc(f.timers, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	f.timers = slices.DeleteFunc(f.timers, func(tm *fakeTimer) bool {
		if tm.at.After(f.now) {
			return false
		}
		tm.c <- tm.at
		return true
	})
}

// Pending returns how many timers are waiting to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// PendingBy returns how many pending timers are due at or before t, so a
// test can tell the timers it waits for from others (a lease renewal due
// much later, say).
func (f *Fake) PendingBy(t time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, tm := range f.timers {
		if !tm.at.After(t) {
			n++
		}
	}
	return n
}

// WaitTimers returns a channel closed once at least n timers are pending,
// so a test can wait for a goroutine to arm its timeout before advancing.
// It starts no goroutine: a NewTimer that brings the count to n closes it.
func (f *Fake) WaitTimers(n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if len(f.timers) >= n {
		close(ch)
		return ch
	}
	f.waiters = append(f.waiters, timerWaiter{n: n, ch: ch})
	return ch
}

// fakeTimer is a timer of a Fake: pending while it is in the Fake's
// timers, fired or stopped once it is not.
type fakeTimer struct {
	f  *Fake
	at time.Time
	c  chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	i := slices.Index(t.f.timers, t)
	if i < 0 {
		return false
	}
	t.f.timers = slices.Delete(t.f.timers, i, i+1)
	return true
}

// WithTimeout returns a copy of ctx that is cancelled when c's timer of d
// fires (or when ctx is, or cancel is called). Unlike
// context.WithTimeout it follows c, so a Fake drives it without sleeping.
// Once it fired, context.Cause of the returned context is
// context.DeadlineExceeded. Call cancel to release its goroutine.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	return withTimer(ctx, c.NewTimer(d))
}

// WithDeadline is WithTimeout for a point in time: the returned context is
// cancelled once c reaches deadline (at once when it has), armed with
// NewTimerAt.
func WithDeadline(ctx context.Context, c Clock, deadline time.Time) (context.Context, context.CancelFunc) {
	return withTimer(ctx, NewTimerAt(c, deadline))
}

func withTimer(ctx context.Context, t Timer) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-t.C():
			cancel(context.DeadlineExceeded)
		case <-out.Done():
			t.Stop()
		}
	}()
	return out, func() { cancel(context.Canceled) }
}
