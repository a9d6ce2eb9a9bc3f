package pgstore

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

// Why the NOTIFY is not part of the committing transaction: PostgreSQL
// serializes the commits of every transaction that has sent a
// notification, in the whole cluster, under one lock held across the
// commit's WAL flush (PreCommit_Notify), so that notifications are queued
// in commit order. With a NOTIFY in each transition, sixteen concurrent
// transitions commit one at a time, at the single-committer rate
// (BenchmarkPGTransition measured about 4 times slower at conc=16). The
// publisher instead sends the notifications of many commits together,
// right after they commit, from a connection of its own with
// synchronous_commit off, so that its own short transactions wait for no
// flush.

// publishRetry is the pause before a failed publication is tried again.
const publishRetry = 100 * time.Millisecond

// publishEvery spaces the publisher's transactions: a commit arriving
// sooner than that after the last one waits for the rest of it, with
// the others that arrive meanwhile. An idle publisher sends at once.
const publishEvery = 2 * time.Millisecond

// publish queues notifications for the workspaces of a commit.
func (n *notifier) publish(changed []baton.WorkspaceID) {
	if len(changed) == 0 {
		return
	}
	n.mu.Lock()
	for _, ws := range changed {
		n.unsent[string(ws)] = struct{}{}
	}
	n.mu.Unlock()
	n.kickPublisher()
}

// kickPublisher tells the publisher that notifications are queued.
func (n *notifier) kickPublisher() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// takeUnsent returns and clears the queued workspaces.
func (n *notifier) takeUnsent() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := slices.Sorted(maps.Keys(n.unsent))
	clear(n.unsent)
	return out
}

// publisher sends queued notifications until ctx ends, then makes a last
// attempt for what is left.
func (n *notifier) publisher(ctx context.Context) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	var last time.Time
	for {
		select {
		case <-n.kick:
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
			conn = n.send(fctx, conn, n.takeUnsent())
			cancel()
			return
		}
		sleep(ctx, publishEvery-time.Since(last))
		last = time.Now()
		wss := n.takeUnsent()
		if len(wss) == 0 {
			continue
		}
		if conn = n.send(ctx, conn, wss); conn == nil {
			n.mu.Lock()
			for _, ws := range wss { // put back what could not be sent
				n.unsent[ws] = struct{}{}
			}
			n.mu.Unlock()
			if sleep(ctx, publishRetry) {
				n.kickPublisher() // try again
			}
		}
	}
}

// send notifies wss on conn (connecting first if conn is nil) and returns
// the connection, or nil after a failure.
func (n *notifier) send(ctx context.Context, conn *pgx.Conn, wss []string) *pgx.Conn {
	if len(wss) == 0 {
		return conn
	}
	if conn == nil {
		var err error
		if conn, err = n.dial(ctx, "baton-pgstore-publisher", "synchronous_commit", "off"); err != nil {
			n.log.Warn("pgstore: cannot connect to send notifications", zap.Error(err))
			return nil
		}
		n.setSelf(conn.PgConn().PID())
	}
	_, err := conn.Exec(ctx, "SELECT pg_notify($1, ws) FROM unnest($2::text[]) AS ws", n.channel, wss)
	if err != nil {
		n.log.Warn("pgstore: cannot send notifications", zap.Strings("workspaces", wss), zap.Error(err))
		closeConn(conn)
		n.setSelf(0) // its pid may be another backend's next
		return nil
	}
	return conn
}

func (n *notifier) setSelf(pid uint32) {
	n.mu.Lock()
	n.self = pid
	n.mu.Unlock()
}
