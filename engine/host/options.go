package host

import (
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/internal/ids"
)

// Defaults of Options.
const (
	// DefaultGrace is how long a drain waits before it reports what still
	// holds the generation. It never aborts anything.
	DefaultGrace = 600_000 * time.Millisecond
	// DefaultSweep is the period of the drain's sweep, which parks
	// sessions whose runtime offers no settle subscription (and backs up
	// one that drops a notification).
	DefaultSweep = 50 * time.Millisecond
	// DefaultWriteTimeout bounds one write to a connection; a client that
	// stops reading for that long is disconnected.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultMaxQueuedRecords is how many records may wait for one slow
	// connection before it is disconnected.
	DefaultMaxQueuedRecords = 1 << 16
)

// Options configure a Host. The zero value is usable: every field has a
// default.
type Options struct {
	// Logger receives the host's structured logs; zap.NewNop() if nil.
	Logger *zap.Logger
	// InstanceID names this host process; a fresh random id if empty. It
	// must be a valid baton id (baton.ValidID).
	InstanceID string
	// Generation is this host's generation number, 1 if zero; a successor
	// is its predecessor's generation + 1. Negative is invalid.
	Generation int
	// Grace is the drain's soft grace (DefaultGrace if zero). When it
	// expires the host rescans and logs what still holds it; it never
	// aborts a turn. Negative is invalid.
	Grace time.Duration
	// Sweep is the drain's sweep period (DefaultSweep if zero). Negative
	// is invalid.
	Sweep time.Duration
	// IdleEvict, when positive, closes a session no connection is
	// attached to once it has been idle that long (checked at least every
	// second), with reason idle_evicted. Idle here is the broader
	// predicate: a durable wake source keeps the session open. Zero never
	// evicts; negative is invalid.
	IdleEvict time.Duration
	// ClaimDir is the directory of cross-generation path claims, shared by
	// every generation (and every host) that may open the same session
	// files; it must be absolute and is created if missing. Empty keeps
	// reservations within this process only.
	ClaimDir string
	// MaxLineBytes bounds one command line (DefaultMaxLineBytes if zero).
	MaxLineBytes int
	// WriteTimeout bounds one write to a connection (DefaultWriteTimeout
	// if zero).
	WriteTimeout time.Duration
	// MaxQueuedRecords bounds the records waiting for one connection
	// (DefaultMaxQueuedRecords if zero).
	MaxQueuedRecords int

	// clock drives the grace and the sweep; tests in this package set it.
	clock clock.Clock
}

// withDefaults validates o and fills its defaults. It returns an
// ErrInvalidOptions error and changes nothing for an out-of-range field.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Generation < 0:
		return o, baton.Errorf(ErrInvalidOptions, "generation %d is negative", o.Generation)
	case o.Grace < 0:
		return o, baton.Errorf(ErrInvalidOptions, "grace %v is negative", o.Grace)
	case o.Sweep < 0:
		return o, baton.Errorf(ErrInvalidOptions, "sweep %v is negative", o.Sweep)
	case o.IdleEvict < 0:
		return o, baton.Errorf(ErrInvalidOptions, "idle eviction %v is negative", o.IdleEvict)
	case o.MaxLineBytes < 0, o.MaxQueuedRecords < 0, o.WriteTimeout < 0:
		return o, baton.Errorf(ErrInvalidOptions, "negative limit")
	case o.InstanceID != "" && !baton.ValidID(o.InstanceID):
		return o, baton.Errorf(ErrInvalidOptions, "instance id %q", o.InstanceID)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.InstanceID == "" {
		o.InstanceID = ids.New("host")
	}
	if o.Generation == 0 {
		o.Generation = 1
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Sweep == 0 {
		o.Sweep = DefaultSweep
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxQueuedRecords == 0 {
		o.MaxQueuedRecords = DefaultMaxQueuedRecords
	}
	if o.clock == nil {
		o.clock = clock.Real{}
	}
	return o, nil
}
