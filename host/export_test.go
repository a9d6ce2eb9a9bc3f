package host

import (
	"context"

	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/host/internal/wire"
)

// What the tests of package host_test reach inside the package. They live
// outside it because they use host/hosttest, which imports it.

// Hold is one session that still holds the generation.
type Hold = hold

// The sentinels of the invalid_command, invalid_path and unknown_session
// wire codes; a caller matches them with baton.ErrInvalid and
// baton.ErrNotFound.
var (
	ErrInvalidCommand = errInvalidCommand
	ErrInvalidPath    = errInvalidPath
	ErrUnknownSession = errUnknownSession
)

// DefaultGrace is the grace of a host whose Options leave it zero.
const DefaultGrace = defaultGrace

// WithClock returns opts with the clock that drives the grace, the sweep
// and idle eviction.
func WithClock(opts Options, c clock.Clock) Options {
	opts.clock = c
	return opts
}

// Holding lists what still holds the host.
func (h *Host) Holding() []Hold { return h.holding() }

// Call sends any command on c, malformed ones included, and returns its
// response.
func Call(ctx context.Context, c *Client, cmd wire.Command) (Received, error) {
	return c.call(ctx, cmd)
}

// Received is a decoded response, its data included.
type Received = received

// Tracked counts the sessions the host tracks: reserved paths and open
// handles. Both are zero once every session closed.
func (h *Host) Tracked() (reserved, open int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.byPath {
		e.mu.Lock()
		if e.state != stOpening {
			open++
		}
		e.mu.Unlock()
	}
	return len(h.byPath), open
}
