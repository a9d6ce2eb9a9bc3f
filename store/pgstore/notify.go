package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
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
// subscribers. Its listener, started by the first subscription, holds one
// connection of its own (outside the pool: LISTEN belongs to a session).
type notifier struct {
	cfg     *pgx.ConnConfig
	channel string
	log     *zap.Logger

	mu      sync.Mutex
	subs    map[*subscription]struct{}
	started bool
	closed  bool
	stop    context.CancelFunc
	done    chan struct{} // closed when the listener has returned
}

type subscription struct {
	ws baton.WorkspaceID // "" for every workspace
	ch chan struct{}
}

func newNotifier(cfg *pgx.ConnConfig, channel string, log *zap.Logger) *notifier {
	return &notifier{cfg: cfg, channel: channel, log: log, subs: map[*subscription]struct{}{}}
}

// subscribe registers a subscriber and starts the listener if needed.
// After close the channel never receives.
func (n *notifier) subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	sub := &subscription{ws: ws, ch: make(chan struct{}, 1)}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return sub.ch, func() {}
	}
	n.subs[sub] = struct{}{}
	if !n.started {
		// The listener notifies every subscriber once it listens, so a
		// commit made before that is not missed.
		n.started = true
		ctx, stop := context.WithCancel(context.Background())
		n.stop, n.done = stop, make(chan struct{})
		go n.listen(ctx)
	}
	return sub.ch, sync.OnceFunc(func() {
		n.mu.Lock()
		delete(n.subs, sub)
		n.mu.Unlock()
	})
}

// close stops the listener and waits for it; later notifications go
// nowhere.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	n.subs = map[*subscription]struct{}{}
	stop, done := n.stop, n.done
	n.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// wake notifies the subscribers of ws and those of every workspace; all
// notifies every subscriber. Neither blocks: a channel holding a value
// already has a notification pending.
func (n *notifier) wake(ws baton.WorkspaceID, all bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for sub := range n.subs {
		if all || sub.ws == "" || sub.ws == ws {
			select {
			case sub.ch <- struct{}{}:
			default:
			}
		}
	}
}

// local notifies in-process subscribers of a commit at once, without
// waiting for the server's notification to come back.
func (n *notifier) local(changed []baton.WorkspaceID) {
	for _, ws := range changed {
		n.wake(ws, false)
	}
}

// listen keeps a LISTEN connection until ctx ends, reconnecting when it is
// lost. After each (re)connection every subscriber is notified: changes
// committed while nobody listened would be missed otherwise.
func (n *notifier) listen(ctx context.Context) {
	defer close(n.done)
	wait := retryMin
	for {
		err := n.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil { // connected and listened before it failed
			wait = retryMin
		}
		n.log.Warn("pgstore: notification listener lost its connection; reconnecting",
			zap.String("channel", n.channel), zap.Duration("after", wait), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}


// session connects, listens and dispatches until the connection fails or
// ctx ends. It returns nil if it had listened (the failure came later).
func (n *notifier) session(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, n.cfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{n.channel}.Sanitize()); err != nil {
		return err
	}
	n.log.Debug("pgstore: listening", zap.String("channel", n.channel))
	n.wake("", true)
	for {
		wctx, cancel := context.WithTimeout(ctx, pingEvery)
		nt, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			n.wake(baton.WorkspaceID(nt.Payload), false)
			continue
		case ctx.Err() != nil:
			return nil
		case !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed():
			n.log.Debug("pgstore: listener", zap.Error(err))
			return nil
		}
		// Idle for pingEvery: make sure the connection is still there.
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			n.log.Debug("pgstore: listener ping", zap.Error(err))
			return nil
		}
	}
}
