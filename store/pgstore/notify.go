package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store/internal/notify"
)

// Listener timing. The listener checks an idle connection with a ping
// every pingEvery, so that a connection lost without a word (a dropped
// network path) is noticed within about pingEvery+pingTimeout; it waits
// retryMin, doubling up to retryMax, between failed reconnections.
const (
	pingEvery   = 30 * time.Second
	pingTimeout = 5 * time.Second
	retryMin    = 50 * time.Millisecond
	retryMax    = 5 * time.Second
)

// notifier dispatches the schema's notifications to in-process
// subscribers. Its listener holds one connection of its own, outside the
// pool (LISTEN belongs to a session).
//
// Commits of this store notify its subscribers directly, when the commit
// returns; the server's notifications of those commits, recognised by the
// backend process id of the publisher's connection (publish.go), which
// sends them all, are dropped, so that each commit notifies once.
// Notifications from any other backend (another process, another Store)
// are dispatched as they arrive.
type notifier struct {
	cfg     *pgx.ConnConfig
	channel string
	log     *zap.Logger

	hub    notify.Hub // the subscribers
	mu     sync.Mutex
	self   uint32 // the backend pid of the publisher's connection, 0 if none
	closed bool
	stop   context.CancelFunc // ends the listener and the publisher
	wg     sync.WaitGroup     // the listener and the publisher

	// The publisher (publish.go) sends the notifications of commits.
	unsent map[string]struct{} // workspace ids
	kick   chan struct{}
}

func newNotifier(cfg *pgx.ConnConfig, channel string, log *zap.Logger) *notifier {
	return &notifier{
		cfg: cfg, channel: channel, log: log,
		unsent: map[string]struct{}{},
		kick:   make(chan struct{}, 1),
	}
}

// start listens on a first connection, so that nothing committed after
// Open returns can be missed, hands it to the listener goroutine, and
// starts the publisher.
func (n *notifier) start(ctx context.Context) error {
	conn, err := n.connect(ctx)
	if err != nil {
		return dbErr("listen", err)
	}
	lctx, stop := context.WithCancel(context.Background())
	n.stop = stop
	n.wg.Go(func() { n.listen(lctx, conn) })
	n.wg.Go(func() { n.publisher(lctx) })
	return nil
}

// close stops the listener and the publisher (which sends what is queued
// first) and waits for them; later notifications go nowhere. It follows a
// successful start.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.stop()
	n.wg.Wait()
}

// wake notifies the subscribers of wss and those of every workspace (all:
// every subscriber), unless from is the pid of the publisher's connection
// (0: a local commit) or the notifier is closed. It never blocks: a
// channel holding a value already has a notification pending.
func (n *notifier) wake(wss []baton.WorkspaceID, all bool, from uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || (from != 0 && from == n.self) {
		return
	}
	if all {
		n.hub.WakeAll()
	} else {
		n.hub.Notify(wss)
	}
}

// dial opens a connection of the notifier's own, named app in
// pg_stat_activity, with the run-time parameters params (name, value...).
func (n *notifier) dial(ctx context.Context, app string, params ...string) (*pgx.Conn, error) {
	cfg := n.cfg.Copy()
	cfg.RuntimeParams["application_name"] = app
	for i := 0; i+1 < len(params); i += 2 {
		cfg.RuntimeParams[params[i]] = params[i+1]
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// connect opens the listener's connection and listens on it.
func (n *notifier) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := n.dial(ctx, "baton-pgstore-listener")
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{n.channel}.Sanitize()); err != nil {
		closeConn(conn)
		return nil, err
	}
	n.log.Debug("pgstore: listening", zap.String("channel", n.channel))
	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}

// listen serves conn until it fails, then reconnects, until ctx ends.
// After each reconnection every subscriber is notified: changes committed
// while nobody listened would be missed otherwise.
func (n *notifier) listen(ctx context.Context, conn *pgx.Conn) {
	for {
		err := n.serve(ctx, conn)
		closeConn(conn)
		if ctx.Err() != nil {
			return
		}
		n.log.Warn("pgstore: notification listener lost its connection; reconnecting",
			zap.String("channel", n.channel), zap.Error(err))
		if conn = n.reconnect(ctx); conn == nil {
			return
		}
		n.wake(nil, true, 0)
	}
}

// reconnect retries connect with a growing pause; nil once ctx ends.
func (n *notifier) reconnect(ctx context.Context) *pgx.Conn {
	for wait := retryMin; sleep(ctx, wait); {
		conn, err := n.connect(ctx)
		if err == nil {
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		wait = min(2*wait, retryMax)
		n.log.Warn("pgstore: notification listener cannot reconnect", zap.Duration("retry in", wait), zap.Error(err))
	}
	return nil
}

// sleep waits for d to pass; false if ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// serve dispatches the notifications of conn until it fails or ctx ends.
func (n *notifier) serve(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, pingEvery)
		nt, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			n.wake([]baton.WorkspaceID{baton.WorkspaceID(nt.Payload)}, false, nt.PID)
			continue
		case ctx.Err() != nil:
			return nil
		case !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed():
			return err
		}
		// Idle for pingEvery: make sure the connection is still there.
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return err
		}
	}
}
