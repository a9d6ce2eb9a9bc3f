package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// pkg prefixes this package's error messages.
const pkg = "pgstore"

// Errors of this package, besides the store sentinels.
var (
	// ErrDatabase: PostgreSQL could not be reached or refused a statement
	// for a reason other than a conflict (connection lost, the server
	// ended a transaction that outlived one of its limits, server shut
	// down, out of disk). The error also unwraps to pgx's own
	// error. An Update that returns it may or may not have committed when
	// the connection was lost during the commit.
	ErrDatabase = baton.NewError(baton.ErrUnavailable, "pgstore: database failure")
)

// Store is a store.Store and a store.Notifier on one PostgreSQL schema. It
// is safe for concurrent use, and any number of Stores, in any number of
// processes, may share a schema.
type Store struct {
	pool       *pgxpool.Pool
	log        *zap.Logger
	maxRetries int
	timeout    time.Duration
	notify     *notifier
	seed       int64 // the seed of the workspace locks' keys (tx.go, lockSQL)
	closed     atomic.Bool
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Notifier = (*Store)(nil)
)

// Open connects to the PostgreSQL server named by connString (a URL or
// key=value string, as pgxpool.ParseConfig reads it), creates the schema
// if needed and brings its tables to this version under an advisory lock,
// so that processes opening one schema at once migrate it once. The
// connections of the pool use the schema as their search_path, UTC as
// their time zone, and the server-side limits of Options (LockTimeout,
// IdleInTransactionTimeout, StatementTimeout).
//
// Errors: baton.ErrInvalid for an unparsable connString or invalid
// Options; store.ErrFormat if the schema was written by a newer version;
// ErrDatabase if the server cannot be reached or refuses the migration; an
// error wrapping ctx.Err() if ctx ends first.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
	if opts.Schema == "" {
		opts.Schema = defaultSchema
	}
	if opts.Timeout == 0 {
		opts.Timeout = defaultTimeout
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, baton.Errorf(baton.ErrInvalid, "pgstore: connection string: %v", err)
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	schema := opts.Schema
	// The schema as search_path, and UTC as time zone (the change feed
	// renders times as text).
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(connString, "pool_max_conns"):
		cfg.MaxConns = defaultMaxConns
	}
	s := &Store{
		log:        log,
		maxRetries: backend.Retries(opts.MaxConflictRetries),
		timeout:    opts.Timeout,
		notify:     newNotifier(cfg.ConnConfig.Copy(), schema+"_changes", log),
	}
	opts.limits(cfg.ConnConfig.RuntimeParams)
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		// timestamptz values scan in UTC rather than in the process's
		// local zone.
		c.TypeMap().RegisterType(&pgtype.Type{
			Name:  "timestamptz",
			OID:   pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, dbErr("connect", err)
	}
	s.pool = pool
	if err := migrate(ctx, pool, schema, log); err != nil {
		pool.Close()
		return nil, err
	}
	if err := pool.QueryRow(ctx, "SELECT hashtextextended('baton.pgstore.workspace:' || $1, 0)", schema).Scan(&s.seed); err != nil {
		pool.Close()
		return nil, dbErr("connect", err)
	}
	if err := s.notify.start(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the notification listener, ends every subscription's
// deliveries and closes the pool. It waits for running transactions to
// release their connections, so a function given to Update or View must not
// call it. A second Close returns store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return store.ErrClosed
	}
	s.notify.close()
	s.pool.Close()
	return nil
}

// Update runs fn in a READ COMMITTED transaction and commits if fn
// returns nil. Before its first statement on the rows of a workspace, the
// transaction takes that workspace's lock, which it holds until it ends:
// Updates of one workspace run one after another, each seeing what the
// one before committed, and Updates of different workspaces never wait
// for each other. The lists across workspaces (ListWorkspaces,
// PendingHandoffs(""), DueWakeups, QueuedContinuations, LiveLaunches(""))
// take no lock: they return what was committed when they ran, so fn must
// read a record they returned again by its key (GetHandoff...) before it
// writes it back. fn's statements go to the server as it calls the Tx (a
// read waits for its answer), except writes whose outcome is already
// known, which are sent with the next read or with the COMMIT.
//
// When PostgreSQL reports a deadlock (SQLSTATE 40P01: two Updates took
// the locks of the same workspaces in opposite orders), a lock wait
// longer than Options.LockTimeout (55P03), or a uniqueness race with a
// concurrent transaction, the transaction is rolled back and fn is called
// again on a fresh one, after a short random pause, up to
// Options.MaxConflictRetries more times; then Update returns
// store.ErrTxConflict. fn must therefore have no effect outside the
// transaction. Whatever fn returns after a Tx method reported such a
// failure, the attempt is retried. If fn returns an error, or a statement
// failed and fn went on regardless, the transaction is rolled back and
// the error returned.
//
// The context bounds the whole Update (Options.Timeout when it has no
// deadline); the Tx uses it for every statement.
//
// Errors: baton.ErrInvalid for a nil fn; store.ErrClosed after Close; an
// error wrapping ctx.Err() if ctx ends first; store.ErrTxConflict;
// ErrDatabase; otherwise fn's error.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.run(ctx, fn, true)
}

// View runs fn in a REPEATABLE READ, READ ONLY transaction: every read sees
// the same snapshot, the one of its first statement. Writes return an
// error matching baton.ErrInternal. View takes no lock and never retries: it never
// waits for an Update, nor an Update for it.
//
// Errors: as Update, without store.ErrTxConflict.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.run(ctx, fn, false)
}

func (s *Store) run(ctx context.Context, fn func(store.Tx) error, update bool) error {
	if fn == nil {
		return baton.Errorf(baton.ErrInvalid, "pgstore: nil function")
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok && s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		err, retry := s.attempt(ctx, fn, update)
		if !retry {
			return err
		}
		if attempt >= s.maxRetries {
			return fmt.Errorf("%w (%d attempts): %w", store.ErrTxConflict, attempt+1, err)
		}
		s.log.Debug("pgstore: conflict, retrying", zap.Int("attempt", attempt+1), zap.Error(err))
		// Up to (attempt+1) ms, at most about 10 ms.
		if err := backend.Pause(ctx, time.Duration(min(attempt+1, 10))*time.Millisecond); err != nil {
			return fmt.Errorf("pgstore: %w", err)
		}
	}
}

// attempt runs fn once; retry says the failure is worth another attempt.
func (s *Store) attempt(ctx context.Context, fn func(store.Tx) error, update bool) (err error, retry bool) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		if s.closed.Load() {
			return store.ErrClosed, false
		}
		return dbErr("acquire a connection", err), false
	}
	t := &tx{ctx: ctx, conn: conn, update: update, seed: s.seed}
	defer func() {
		t.done = true
		t.rollback()
		conn.Release()
	}()
	ferr := fn(t)
	switch {
	case t.conflict:
		return t.err, true
	case ferr != nil:
		return ferr, false
	case t.err != nil:
		return t.err, false
	}
	err = t.commit()
	if update && !t.conflict {
		// A failed commit notifies too: the connection may have failed
		// after the server committed, and a spurious notification is
		// allowed, a lost one is not.
		s.notify.wake(t.changed, false, 0)
		s.notify.publish(t.changed)
	}
	return err, t.conflict
}

// Subscribe implements store.Notifier. After every Update that appends to
// a workspace's change feed, the subscribers of this Store are told when
// the commit returns, and a NOTIFY with the workspace id follows within
// milliseconds (see the package Caveats for why it is not part of the
// commit), so that a Store in any process sharing the schema hears of it
// through the listener Open started on a connection of its own (LISTEN on
// the schema's channel); the server's echo of this Store's own commits is
// dropped. When the listener's connection is lost,
// it reconnects and then notifies every subscriber, since changes may have
// been missed meanwhile. After Close, channels receive nothing more.
func (s *Store) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	n := s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return make(chan struct{}, 1), func() {} // never receives
	}
	return n.hub.Subscribe(ws)
}

// Code values of PostgreSQL errors this package handles.
const (
	codeDeadlock     = "40P01"
	codeUnique       = "23505"
	codeLockTimeout  = "55P03" // a lock wait ran out (Options.LockTimeout)
	codeBadText      = "22021" // a NUL byte or invalid UTF-8 in a string
	codeUntranslated = "22P05"
)

// isConflict reports a failure that a retry of the whole transaction can
// resolve: a deadlock, a lock wait that ran out (its holder may have
// ended since: a frozen one's transaction is ended by the server), and a
// unique violation: the statements that could violate a uniqueness rule
// on their own check it first (ON CONFLICT DO NOTHING, NOT EXISTS), so
// one that still fails lost a race with a concurrent transaction, and on
// the retry the check sees that transaction's rows. (An Update is READ
// COMMITTED, which raises no serialization failure.)
func isConflict(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeDeadlock, codeUnique, codeLockTimeout:
			return true
		}
	}
	return false
}

// dbErr classifies a failure of pgx: a context error stays one, bad text
// is baton.ErrInvalid, the rest matches ErrDatabase.
func dbErr(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == codeBadText || pe.Code == codeUntranslated) {
		return fmt.Errorf("%w: pgstore: %s: PostgreSQL text holds no NUL byte and only valid UTF-8: %w", baton.ErrInvalid, op, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrDatabase, op, err)
}
