package pgstore

import (
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

// DefaultSchema is the schema the store's tables live in when
// Options.Schema is empty.
const DefaultSchema = "baton"

// DefaultMaxConflictRetries is how many times Update re-runs its function
// after a serialization failure when Options.MaxConflictRetries is 0.
const DefaultMaxConflictRetries = 16

// DefaultTimeout bounds an Update or View whose context has no deadline,
// when Options.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// DefaultCacheRows is how many rows a Store keeps in its row cache when
// Options.CacheRows is 0.
const DefaultCacheRows = 4096

// maxSchemaLen keeps the notification channel name, the schema name plus a
// suffix, under PostgreSQL's 63-byte identifier limit.
const maxSchemaLen = 48

// Options configure Open. The zero value is ready to use: DefaultSchema,
// pgxpool's default pool size, DefaultMaxConflictRetries, DefaultTimeout and
// no logging.
type Options struct {
	// Logger receives the migrations Open applies (info), the store's
	// retries (debug), and the notification listener's and publisher's
	// connection failures (warn). Nil means zap.NewNop().
	Logger *zap.Logger
	// Schema is the PostgreSQL schema that holds the tables; Open creates
	// it. Several stores (tests, tenants) can share one database, each in
	// its own schema. Lower-case letters, digits and '_', starting with a
	// letter or '_', at most 48 bytes. Empty means DefaultSchema.
	Schema string
	// MaxConns is the size of the connection pool. 0 means pgxpool's
	// default (the larger of 4 and the number of CPUs), or the pool_max_conns
	// parameter of the connection string. The notification listener uses
	// one more connection of its own.
	MaxConns int32
	// MaxConflictRetries bounds how many times Update re-runs its function
	// after PostgreSQL reports a serialization failure or a deadlock, before
	// it returns store.ErrTxConflict. 0 means DefaultMaxConflictRetries; a
	// negative value means never retry.
	MaxConflictRetries int
	// Timeout bounds each Update and View (all its attempts) whose context
	// has no deadline of its own. 0 means DefaultTimeout; a negative value
	// means no bound.
	Timeout time.Duration
	// CacheRows bounds the Store's cache of the workspace, reservation and
	// pending handoff rows its Updates read and write, which lets an
	// Update answer a read of such a row without a round trip (the package
	// doc says how that stays serializable). 0 means DefaultCacheRows; a
	// negative value means no cache: every read goes to the server.
	CacheRows int
}

func (o Options) schema() string {
	if o.Schema == "" {
		return DefaultSchema
	}
	return o.Schema
}

func (o Options) maxRetries() int {
	switch {
	case o.MaxConflictRetries == 0:
		return DefaultMaxConflictRetries
	case o.MaxConflictRetries < 0:
		return 0
	}
	return o.MaxConflictRetries
}

func (o Options) cacheRows() int {
	if o.CacheRows == 0 {
		return DefaultCacheRows
	}
	return o.CacheRows
}

func (o Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

func (o Options) validate() error {
	s := o.schema()
	if len(s) > maxSchemaLen {
		return baton.Errorf(baton.ErrInvalid, "pgstore: schema %q is longer than %d bytes", s, maxSchemaLen)
	}
	for i, c := range s {
		ok := c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return baton.Errorf(baton.ErrInvalid, "pgstore: schema %q: only a-z, 0-9 and _ (not first) are allowed", s)
		}
	}
	if o.MaxConns < 0 {
		return baton.Errorf(baton.ErrInvalid, "pgstore: MaxConns %d < 0", o.MaxConns)
	}
	return nil
}
