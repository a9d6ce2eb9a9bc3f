package pgstore

import (
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

// defaultSchema is the schema the store's tables live in when
// Options.Schema is empty.
const defaultSchema = "baton"

// defaultTimeout bounds an Update or View whose context has no deadline,
// when Options.Timeout is 0.
const defaultTimeout = 30 * time.Second

// The server-side limits of the store's sessions when the Options leave
// them 0 (see Options.LockTimeout).
const (
	defaultLockTimeout              = 10 * time.Second
	defaultIdleInTransactionTimeout = 5 * time.Second
	defaultStatementTimeout         = 30 * time.Second
)

// defaultMaxConns is the size of the pool when neither Options.MaxConns
// nor the connection string's pool_max_conns sets it.
const defaultMaxConns = 16

// maxSchemaLen keeps the notification channel name, the schema name plus a
// suffix, under PostgreSQL's 63-byte identifier limit.
const maxSchemaLen = 48

// Options configure Open. The zero value is ready to use: schema "baton",
// a pool of 16 connections, 16 conflict retries, a 30 s timeout, the default
// server-side limits and no logging.
type Options struct {
	// Logger receives the migrations Open applies (info), the store's
	// retries (debug), and the notification listener's and publisher's
	// connection failures (warn). Nil means zap.NewNop().
	Logger *zap.Logger
	// Schema is the PostgreSQL schema that holds the tables; Open creates
	// it. Several stores (tests, tenants) can share one database, each in
	// its own schema. Lower-case letters, digits and '_', starting with a
	// letter or '_', at most 48 bytes. Empty means "baton".
	Schema string
	// MaxConns is the size of the connection pool: how many Updates and
	// Views run at once; the others wait for a connection. 0 means the
	// pool_max_conns parameter of the connection string, or
	// 16: an Update spends most of its time waiting for its
	// round trips and the WAL flush of its commit, not on a CPU, and
	// PostgreSQL flushes the commits that wait together at once, so more
	// connections than cores keep the server busy. The notification
	// listener and publisher use two more connections of their own.
	MaxConns int32
	// MaxConflictRetries bounds how many times Update re-runs its function
	// after PostgreSQL reports a deadlock or a lock wait that ran out,
	// before it returns store.ErrTxConflict. 0 means 16; a
	// negative value means never retry.
	MaxConflictRetries int
	// Timeout bounds each Update and View (all its attempts) whose context
	// has no deadline of its own. 0 means 30 s; a negative value
	// means no bound.
	Timeout time.Duration
	// LockTimeout, IdleInTransactionTimeout and StatementTimeout are the
	// server-side limits of the pool's sessions (PostgreSQL's lock_timeout,
	// idle_in_transaction_session_timeout and statement_timeout), which
	// hold even when the process is frozen or cut off: a transaction idle
	// between its statements for longer than IdleInTransactionTimeout is
	// ended by the server, with its session, which releases its locks; a
	// statement that waits longer than LockTimeout for a lock fails (and
	// Update tries again, see MaxConflictRetries); one that runs longer
	// than StatementTimeout fails. So a process frozen inside an Update
	// (SIGSTOP, a paused VM) holds its workspace's lock for at most
	// IdleInTransactionTimeout. 0 means 10 s, 5 s and 30 s; a
	// negative value means no limit. Values are rounded down to the
	// millisecond.
	LockTimeout              time.Duration
	IdleInTransactionTimeout time.Duration
	StatementTimeout         time.Duration
}

// limits sets the server-side limits in a connection's parameters.
func (o Options) limits(params map[string]string) {
	for name, d := range map[string]struct{ v, def time.Duration }{
		"lock_timeout":                        {o.LockTimeout, defaultLockTimeout},
		"idle_in_transaction_session_timeout": {o.IdleInTransactionTimeout, defaultIdleInTransactionTimeout},
		"statement_timeout":                   {o.StatementTimeout, defaultStatementTimeout},
	} {
		ms := int64(0) // no limit
		switch {
		case d.v == 0:
			ms = d.def.Milliseconds()
		case d.v > 0:
			ms = max(d.v.Milliseconds(), 1)
		}
		params[name] = strconv.FormatInt(ms, 10)
	}
}

// validate checks o, its Schema set.
func (o Options) validate() error {
	s := o.Schema
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
