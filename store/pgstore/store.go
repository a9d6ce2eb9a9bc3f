package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// Errors of this package, besides the store sentinels.
var (
	// ErrDatabase: PostgreSQL could not be reached or refused a statement
	// for a reason other than a serialization failure (connection lost,
	// server shut down, out of disk). The error also unwraps to pgx's own
	// error. An Update that returns it may or may not have committed when
	// the connection was lost during the commit.
	ErrDatabase = baton.NewError(baton.EUNAVAILABLE, "pgstore: database failure")
	// ErrSchema: the schema holds tables of a newer version of this
	// package, or something Open cannot migrate.
	ErrSchema = baton.NewError(baton.EUNSUPPORTED, "pgstore: unsupported schema")
	// ErrTxDone: a Tx method was called after the function it was given
	// to returned. It is a programming error.
	ErrTxDone = baton.NewError(baton.EINTERNAL, "pgstore: transaction used after its function returned")
)

// Store is a store.Store and a store.Notifier on one PostgreSQL schema. It
// is safe for concurrent use, and any number of Stores, in any number of
// processes, may share a schema.
type Store struct {
	pool       *pgxpool.Pool
	log        *zap.Logger
	schema     string
	channel    string // the LISTEN/NOTIFY channel of the schema
	maxRetries int
	timeout    time.Duration
	notify     *notifier
	rows       *rowCache // nil when Options.CacheRows < 0
	gateKey    int64     // the advisory lock of the gate (tx.go, gateAfter)

	mu     sync.Mutex
	closed bool
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
// their time zone and SERIALIZABLE as their default isolation level.
//
// Errors: baton.ErrInvalid for an unparsable connString or invalid
// Options; ErrSchema if the schema was written by a newer version;
// ErrDatabase if the server cannot be reached or refuses the migration; an
// error wrapping ctx.Err() if ctx ends first.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
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
	schema := opts.schema()
	configure(cfg.ConnConfig, schema)
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	s := &Store{
		log:        log,
		schema:     schema,
		channel:    schema + "_changes",
		maxRetries: opts.maxRetries(),
		timeout:    opts.timeout(),
		rows:       newRowCache(opts.cacheRows()),
	}
	s.notify = newNotifier(cfg.ConnConfig.Copy(), s.channel, log)
	// An Update whose statements go in one batch runs in the batch's
	// implicit transaction (tx.commit), at the default isolation level.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "serializable"
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		utcTimes(c)
		s.notify.addOwn(c.PgConn().PID())
		return nil
	}
	cfg.BeforeClose = func(c *pgx.Conn) { s.notify.dropOwn(c.PgConn().PID()) }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, dbErr("connect", err)
	}
	s.pool = pool
	if err := migrate(ctx, pool, schema, log); err != nil {
		pool.Close()
		return nil, err
	}
	if err := pool.QueryRow(ctx, "SELECT hashtextextended('baton.pgstore.gate:' || $1, 0)", schema).Scan(&s.gateKey); err != nil {
		pool.Close()
		return nil, dbErr("connect", err)
	}
	if err := s.notify.start(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// configure sets what every connection of the store needs: the schema as
// search_path and UTC as time zone (the change feed renders times as text).
func configure(cfg *pgx.ConnConfig, schema string) {
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["search_path"] = schema
	cfg.RuntimeParams["timezone"] = "UTC"
}

// utcTimes makes timestamptz values scan in UTC rather than in the
// process's local zone.
func utcTimes(c *pgx.Conn) {
	c.TypeMap().RegisterType(&pgtype.Type{
		Name:  "timestamptz",
		OID:   pgtype.TimestamptzOID,
		Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
	})
}

// Schema returns the schema the store's tables live in.
func (s *Store) Schema() string { return s.schema }

// Close stops the notification listener, ends every subscription's
// deliveries and closes the pool. It waits for running transactions to
// release their connections, so a function given to Update or View must not
// call it. A second Close returns store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.notify.close()
	s.pool.Close()
	return nil
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Update runs fn in a SERIALIZABLE transaction and commits if fn returns
// nil. fn's statements go to the server as it calls the Tx (a read waits
// for its answer), except writes whose outcome is already known, which are
// sent with the next read or with the COMMIT, and reads of workspace,
// reservation and pending handoff rows the Store's row cache holds, which
// are answered at once and checked on the server with the next batch (the
// package doc says how); so the commit and the last writes take one round
// trip, and a transition whose rows are cached takes no other. When the
// check finds a cached row changed, fn runs again on rows read from the
// server; such a rerun does not count as a serialization failure.
//
// When PostgreSQL reports a serialization failure (SQLSTATE 40001), a
// deadlock (40P01), or a uniqueness race with a concurrent transaction,
// the transaction is rolled back and fn is called again on a fresh one,
// after a short random pause, up to Options.MaxConflictRetries more times;
// then Update returns store.ErrTxConflict. From the fourth attempt on, the
// transaction first waits (up to a second) for the Updates under way on
// the schema, in any process, to end, and keeps those that start meanwhile
// waiting until it ends, so that it runs alone and cannot lose again to a
// serialization failure. fn must therefore have no effect outside the
// transaction, and must not wait for another Update. Whatever fn returns after a Tx method reported
// such a failure, the attempt is retried. If fn returns an error, or a
// statement failed and fn went on regardless, the transaction is rolled
// back and the error returned.
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
// the same snapshot, the one of its first statement. Writes return
// store.ErrReadOnly. View never retries: a read-only snapshot transaction
// has no serialization failures. (Unlike a serializable one, such a
// snapshot may, in rare interleavings, show a state no serial order of the
// Updates passes through; the store's rules are enforced by Updates, which
// are serializable.)
//
// Errors: as Update, without store.ErrTxConflict.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.run(ctx, fn, false)
}

func (s *Store) run(ctx context.Context, fn func(store.Tx) error, update bool) error {
	if fn == nil {
		return baton.Errorf(baton.ErrInvalid, "pgstore: nil function")
	}
	if s.isClosed() {
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
	// A rerun after a stale cached row reads from the server: it cannot
	// be stale again, and it is not a lost serialization race.
	fromCache := update && s.rows != nil
	for attempt := 0; ; attempt++ {
		err, end := s.attempt(ctx, fn, update, update && attempt >= gateAfter, fromCache)
		if end == stale {
			s.log.Debug("pgstore: a cached row changed, running again without the cache", zap.Error(err))
			fromCache = false
			attempt--
			continue
		}
		if end != conflict {
			return err
		}
		if attempt >= s.maxRetries {
			return fmt.Errorf("%w (%d attempts): %w", store.ErrTxConflict, attempt+1, err)
		}
		s.log.Debug("pgstore: serialization failure, retrying", zap.Int("attempt", attempt+1), zap.Error(err))
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
}

// pause waits a random time that grows with attempt (at most about 10 ms),
// so that transactions that collided do not collide again in step.
func pause(ctx context.Context, attempt int) error {
	limit := time.Duration(min(attempt+1, 10)) * time.Millisecond
	t := time.NewTimer(rand.N(limit))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pgstore: %w", ctx.Err())
	}
}

// outcome is how an attempt ended: done (committed, or failed for good),
// conflict (a serialization failure: worth another attempt) or stale (a
// row read from the row cache had changed: worth a rerun without it).
type outcome int

const (
	done outcome = iota
	conflict
	stale
)

// attempt runs fn once.
func (s *Store) attempt(ctx context.Context, fn func(store.Tx) error, update, alone, fromCache bool) (error, outcome) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		if s.isClosed() {
			return store.ErrClosed, done
		}
		return dbErr("acquire a connection", err), done
	}
	if alone {
		if err := s.enterAlone(ctx, conn); err != nil {
			conn.Release()
			if isConflict(err) { // the wait ran out
				return err, conflict
			}
			return err, done
		}
	}
	t := newTx(ctx, conn, update, alone, s.gateKey)
	if update {
		t.rows, t.fromCache = s.rows, fromCache
	}
	committed := false
	defer func() {
		t.done = true
		if !committed {
			t.rollback()
			// What the transaction read from the row cache or wrote may
			// be what changed.
			s.rows.drop(t.touched)
			s.rows.drop(slices.Collect(maps.Keys(t.fresh)))
		}
		if alone {
			s.leaveAlone(ctx, conn)
		}
		conn.Release()
	}()
	ferr := fn(t)
	if ferr != nil && t.err == nil && len(t.assumed) > 0 {
		// fn's error may stem from a stale cached row: check them before
		// returning it. The queued writes need not go.
		t.queued = t.queued[:0]
		_ = t.send("check cached rows", func(b *pgx.Batch) { b.Queue("ROLLBACK") })
		// The ROLLBACK ended the transaction unless a check failed before
		// it (then the deferred rollback ends it).
		t.begun = t.err != nil
	}
	switch {
	case t.stale:
		return t.err, stale
	case t.conflict:
		return t.err, conflict
	case ferr != nil:
		return ferr, done
	case t.err != nil:
		return t.err, done
	}
	if err := t.commit(); err != nil {
		if update && !t.conflict && !t.stale {
			// The connection may have failed after the server committed:
			// a spurious notification is allowed, a lost one is not.
			s.notify.local(t.changed)
			s.notify.publish(t.changed)
		}
		switch {
		case t.stale:
			return err, stale
		case t.conflict:
			return err, conflict
		}
		return err, done
	}
	committed = true
	if update {
		s.rows.put(t.fresh)
		s.notify.local(t.changed)
		s.notify.publish(t.changed)
	}
	return nil, done
}

// enterAlone takes the gate's advisory lock exclusively for conn's
// session (see gateAfter in tx.go), waiting up to gateTimeout, in a
// transaction of its own: a session lock outlives the transaction it was
// taken in, and the Update's own transaction, begun after it, takes its
// snapshot after the wait.
func (s *Store) enterAlone(ctx context.Context, conn *pgxpool.Conn) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue("SET LOCAL lock_timeout = '" + gateTimeout + "'")
	b.Queue("SELECT pg_advisory_lock($1)", s.gateKey)
	b.Queue("COMMIT")
	err := conn.SendBatch(ctx, b).Close()
	if err == nil {
		return nil
	}
	if conn.Conn().PgConn().TxStatus() != 'I' {
		rctx, cancel := cleanupContext(ctx)
		if _, rerr := conn.Exec(rctx, "ROLLBACK"); rerr != nil {
			s.closeConn(rctx, conn) // the pool drops it
		}
		cancel()
	}
	switch {
	case isConflict(err):
		return fmt.Errorf("%w: pgstore: wait to run alone: %w", store.ErrTxConflict, err)
	case ctx.Err() != nil:
		return fmt.Errorf("pgstore: wait to run alone: %w", ctx.Err())
	}
	return dbErr("wait to run alone", err)
}

// leaveAlone releases the lock enterAlone took, once the transaction has
// ended. If it cannot, it closes the connection, which the pool then
// drops, and the server releases the lock with the session.
func (s *Store) leaveAlone(ctx context.Context, conn *pgxpool.Conn) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	var released bool
	err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", s.gateKey).Scan(&released)
	if err != nil || !released {
		s.log.Warn("pgstore: cannot release the gate; closing the connection", zap.Bool("released", released), zap.Error(err))
		s.closeConn(ctx, conn)
	}
}

// closeConn closes a pooled connection, which the pool drops on release.
func (s *Store) closeConn(ctx context.Context, conn *pgxpool.Conn) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	_ = conn.Conn().Close(ctx)
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
	return s.notify.subscribe(ws)
}

// Code values of PostgreSQL errors this package handles.
const (
	codeSerialization = "40001"
	codeDeadlock      = "40P01"
	codeUnique        = "23505"
	codeLockTimeout   = "55P03" // the exclusive wait at the gate ran out
	codeBadText       = "22021" // a NUL byte or invalid UTF-8 in a string
	codeUntranslated  = "22P05"
	codeStale         = "BT001" // stale_row: a cached row changed (migration 0004)
)

// isConflict reports a failure that a retry of the whole transaction can
// resolve. A unique violation is one: the statements that could violate a
// uniqueness rule on their own check it first (ON CONFLICT DO NOTHING, NOT
// EXISTS), so one that still fails lost a race with a concurrent
// transaction, and on the retry the check sees that transaction's rows.
func isConflict(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeSerialization, codeDeadlock, codeUnique, codeLockTimeout:
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
