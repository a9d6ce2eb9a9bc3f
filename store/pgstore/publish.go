package pgstore

import (
	"context"
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
		n.unsent[ws] = struct{}{}
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// takeUnsent returns and clears the queued workspaces.
func (n *notifier) takeUnsent() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.unsent))
	for ws := range n.unsent {
		out = append(out, string(ws))
	}
	clear(n.unsent)
	slices.Sort(out)
	return out
}

// requeue puts back what could not be sent.
func (n *notifier) requeue(wss []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ws := range wss {
		n.unsent[baton.WorkspaceID(ws)] = struct{}{}
	}
}

// publisher sends queued notifications until ctx ends, then makes a last
// attempt for what is left.
func (n *notifier) publisher(ctx context.Context) {
	defer close(n.published)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			n.dropOwn(conn.PgConn().PID())
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
		if wait := publishEvery - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		last = time.Now()
		wss := n.takeUnsent()
		if len(wss) == 0 {
			continue
		}
		if conn = n.send(ctx, conn, wss); conn == nil {
			n.requeue(wss)
			t := time.NewTimer(publishRetry)
			select {
			case <-t.C:
				select { // try again
				case n.kick <- struct{}{}:
				default:
				}
			case <-ctx.Done():
				t.Stop()
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
		cfg := n.cfg.Copy()
		cfg.RuntimeParams["synchronous_commit"] = "off"
		cfg.RuntimeParams["application_name"] = "baton-pgstore-publisher"
		var err error
		if conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
			n.log.Warn("pgstore: cannot connect to send notifications", zap.Error(err))
			return nil
		}
		n.addOwn(conn.PgConn().PID())
	}
	_, err := conn.Exec(ctx, "SELECT pg_notify($1, ws) FROM unnest($2::text[]) AS ws", n.channel, wss)
	if err != nil {
		n.log.Warn("pgstore: cannot send notifications", zap.Strings("workspaces", wss), zap.Error(err))
		n.dropOwn(conn.PgConn().PID())
		closeConn(conn)
		return nil
	}
	return conn
}
