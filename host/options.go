package host

import (
	"cmp"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/host/internal/wire"
	"github.com/batonhq/baton/internal/ids"
)

// Defaults of Options.
const (
	defaultGrace            = 600_000 * time.Millisecond
	defaultSweep            = 50 * time.Millisecond
	defaultWriteTimeout     = 10 * time.Second
	defaultMaxQueuedRecords = 1 << 16
)

// errInvalidOptions is what New returns for a bad option; it matches
// baton.ErrInvalid.
var errInvalidOptions = baton.NewError(baton.ErrInvalid, "host: invalid options")

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
	// Grace is the drain's soft grace, 600,000 ms (ten minutes) if zero.
	// When it expires the host rescans and logs what still holds it; it
	// never aborts a turn. Negative is invalid.
	Grace time.Duration
	// Sweep is the period of the drain's sweep, which parks the settled
	// sessions of a runtime without a settle subscription (and backs up one
	// that drops a notification): 50 ms if zero. Negative is invalid.
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
	// MaxLineBytes bounds one command line, 1 MiB if zero; a longer line
	// is answered invalid_command and its connection closed.
	MaxLineBytes int
	// WriteTimeout bounds one write to a connection, 10 s if zero: a
	// client that stops reading for that long is disconnected.
	WriteTimeout time.Duration
	// MaxQueuedRecords bounds the records waiting for one slow
	// connection, 65,536 if zero; one that falls further behind is
	// disconnected.
	MaxQueuedRecords int

	// clock drives the grace and the sweep; tests in this package set it.
	clock clock.Clock
}

// withDefaults validates o and fills its defaults. It returns an
// errInvalidOptions error and changes nothing for an out-of-range field.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Generation < 0:
		return o, baton.Errorf(errInvalidOptions, "generation %d is negative", o.Generation)
	case o.Grace < 0:
		return o, baton.Errorf(errInvalidOptions, "grace %v is negative", o.Grace)
	case o.Sweep < 0:
		return o, baton.Errorf(errInvalidOptions, "sweep %v is negative", o.Sweep)
	case o.IdleEvict < 0:
		return o, baton.Errorf(errInvalidOptions, "idle eviction %v is negative", o.IdleEvict)
	case o.MaxLineBytes < 0, o.MaxQueuedRecords < 0, o.WriteTimeout < 0:
		return o, baton.Errorf(errInvalidOptions, "negative limit")
	case o.InstanceID != "" && !baton.ValidID(o.InstanceID):
		return o, baton.Errorf(errInvalidOptions, "instance id %q", o.InstanceID)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.InstanceID == "" {
		o.InstanceID = ids.New("host")
	}
	if o.clock == nil {
		o.clock = clock.Real{}
	}
	o.Generation = cmp.Or(o.Generation, 1)
	o.Grace = cmp.Or(o.Grace, defaultGrace)
	o.Sweep = cmp.Or(o.Sweep, defaultSweep)
	o.MaxLineBytes = cmp.Or(o.MaxLineBytes, wire.MaxLineBytes)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, defaultWriteTimeout)
	o.MaxQueuedRecords = cmp.Or(o.MaxQueuedRecords, defaultMaxQueuedRecords)
	return o, nil
}
