package hosttest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/internal/wire"
)

// StormTarget is one connection of a Storm and the sessions its commands
// name.
type StormTarget struct {
	// Conn is the connection the commands go over.
	Conn *Conn
	// Sessions are the handles the commands name, in turn; the first is
	// Busy.
	Sessions []string
	// Busy is the session kept in a long turn so that the connection
	// outlives the parks of the others. It only gets get_state, never a
	// prompt: a prompt would queue behind the turn, and queued work holds
	// a session.
	Busy string
}

// StormOptions shape a Storm. Every count must be positive.
type StormOptions struct {
	// Conns is how many connections the storm dials.
	Conns int
	// Sessions is how many sessions each connection opens.
	Sessions int
	// Callers is how many goroutines send commands on each connection.
	Callers int
	// Calls is how many commands each caller sends at most.
	Calls int
	// Busy is the prompt that keeps the first session of each connection
	// busy until AbortBusy ("sleep 600000" for host.Scripted).
	Busy string
}

// warmCalls is how many commands each caller has answered before
// StartStorm returns.
const warmCalls = 11

// Storm keeps commands coming for sessions, from several goroutines per
// connection, while the test does something to them: a drain, whose
// parks the commands race. The host must answer each one (served, or
// session_closed after the terminal record) or close the connection;
// never unknown_session.
type Storm struct {
	targets []StormTarget
	calling sync.WaitGroup
	warm    chan error // one value per caller: nil at warmCalls, or why it stopped first
	mu      sync.Mutex
	errs    []error
}

// StartStorm dials opts.Conns connections to the host at sock; on
// connection c it opens opts.Sessions sessions (the files c<c>-<i>.jsonl
// in dir) and prompts opts.Busy on the first. Then it starts opts.Callers
// goroutines per connection. Caller k sends, for n from 0 to
// opts.Calls-1, a command for the session (n+k) % opts.Sessions of its
// connection: on odd n a prompt "ping" for any session but the busy one,
// get_state otherwise. A caller stops when the host closes the
// connection (host.ErrClosed), after its calls, or at its first error
// other than host.ErrSessionClosed, which Wait returns. The calls have no
// deadline.
//
// StartStorm returns once every caller has had 11 commands answered, so
// that what the test does next races a storm under way. It fails t when a
// command of the set-up fails, when a caller stops before that, or when
// that takes longer than DefaultTimeout. It panics when a count of opts
// is not positive.
func StartStorm(t testing.TB, sock, dir string, opts StormOptions) *Storm {
	t.Helper()
	if opts.Conns <= 0 || opts.Sessions <= 0 || opts.Callers <= 0 || opts.Calls <= 0 {
		panic(fmt.Sprintf("hosttest: StartStorm with %+v", opts))
	}
	s := &Storm{warm: make(chan error, opts.Conns*opts.Callers)}
	for c := range opts.Conns {
		tg := StormTarget{Conn: Dial(t, sock)}
		for i := range opts.Sessions {
			tg.Sessions = append(tg.Sessions, tg.Conn.Open(filepath.Join(dir, fmt.Sprintf("c%d-%d.jsonl", c, i))))
		}
		tg.Busy = tg.Sessions[0]
		tg.Conn.Prompt(tg.Busy, opts.Busy)
		s.targets = append(s.targets, tg)
	}
	for _, tg := range s.targets {
		for k := range opts.Callers {
			s.calling.Add(1)
			go s.call(tg, k, opts.Calls)
		}
	}
	deadline := time.After(DefaultTimeout)
	for range opts.Conns * opts.Callers {
		select {
		case err := <-s.warm:
			if err != nil {
				t.Fatalf("a storm caller stopped before the storm was under way: %v", err)
			}
		case <-deadline:
			t.Fatalf("the storm was not under way within %v", DefaultTimeout)
		}
	}
	return s
}

// Targets returns the storm's connections and their sessions, in the
// order they were dialled.
func (s *Storm) Targets() []StormTarget { return s.targets }

func (s *Storm) call(tg StormTarget, k, calls int) {
	defer s.calling.Done()
	warm := false
	stop := func(err error) {
		if !warm {
			s.warm <- err
		}
	}
	for n := range calls {
		id := tg.Sessions[(n+k)%len(tg.Sessions)]
		var err error
		if n%2 == 1 && id != tg.Busy {
			err = tg.Conn.Client().Prompt(context.Background(), id, "ping")
		} else {
			_, err = tg.Conn.Client().State(context.Background(), id)
		}
		if errors.Is(err, host.ErrClosed) {
			stop(fmt.Errorf("connection closed after %d commands", n))
			return
		}
		if err != nil && !errors.Is(err, host.ErrSessionClosed) {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
			stop(err)
			return
		}
		if n+1 == warmCalls {
			warm = true
			s.warm <- nil
		}
	}
	stop(fmt.Errorf("only %d calls", calls))
}

// WaitParked waits until every connection of the storm has received
// session_closed for each of its sessions but the busy one. It fails the
// test as Conn.WaitFor does.
func (s *Storm) WaitParked(t testing.TB) {
	t.Helper()
	for _, tg := range s.targets {
		for _, id := range tg.Sessions[1:] {
			tg.Conn.WaitFor("parked", IsEvent(wire.EventSessionClosed, id))
		}
	}
}

// WaitRaced waits until every connection of the storm has had at least n
// commands answered session_closed: commands that raced the park of
// their session and came after it. It fails the test when that takes
// longer than DefaultTimeout.
func (s *Storm) WaitRaced(t testing.TB, n int) {
	t.Helper()
	PollUntil(t, "commands hitting parked handles", func() bool {
		for _, tg := range s.targets {
			if tg.Conn.Count(IsFailure("session_closed")) < n {
				return false
			}
		}
		return true
	})
}

// AbortBusy aborts the busy session of every connection: the busy turns
// end, so a drain can park them and close the connections. It fails the
// test when an abort fails.
func (s *Storm) AbortBusy(t testing.TB) {
	t.Helper()
	for _, tg := range s.targets {
		tg.Conn.Abort(tg.Busy)
	}
}

// Wait waits for every caller to stop, which they do once the host has
// closed their connections (or after their calls), and returns the
// errors they stopped on: anything but host.ErrClosed and
// host.ErrSessionClosed. It does not bound the wait.
func (s *Storm) Wait() []error {
	s.calling.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs
}
