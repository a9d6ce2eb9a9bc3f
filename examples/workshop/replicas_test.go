package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDatabase creates a fresh database on the server BATON_PG_URL names
// and returns its URL; it is dropped at cleanup (after the replicas
// started later have stopped). Without BATON_PG_URL the test skips,
// except under CI=true, where a missing server fails it.
func pgDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("BATON_PG_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BATON_PG_URL is not set, and CI=true requires a PostgreSQL server (.ci/postgres.sh starts one)")
		}
		t.Skip("BATON_PG_URL is not set: skipping the replica tests (run them with: .ci/postgres.sh go test ./examples/workshop)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "workshop_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// waitLogCount polls (bounded) until p's log has n lines holding both msg
// and id.
func waitLogCount(t *testing.T, p *proc, msg, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := 0
		for _, line := range strings.Split(p.logs.String(), "\n") {
			if strings.Contains(line, msg) && strings.Contains(line, id) {
				c++
			}
		}
		if c >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d log lines with %s and %s, want %d:\n%s", c, msg, id, n, p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoReplicas: two workshop processes on one PostgreSQL database. A
// transfer started through one is decided through the other: a retry
// after a target that failed readiness (the deciding replica drives the
// new attempt), and a cancel sent to the replica that does not drive the
// transfer (the driving one stops its target and confirms).
func TestTwoReplicas(t *testing.T) {
	t.Parallel()
	db := pgDatabase(t)
	args := []string{"-store", db, "-lease-ttl", "2s", "-demo-slow-ready", "30s", "-log-level", "info"}
	a := startBinary(t, "", append(args, "-instance", "replica-a")...)
	b := startBinary(t, "", append(args, "-instance", "replica-b")...)

	t.Run("retry through the other replica", func(t *testing.T) {
		ws := a.workspace("sonnet")
		src := a.session(ws)
		a.waitIdle(ws)
		hid := a.handoff(ws, "rep-retry", src, "fail-ready", false)
		h := b.waitHandoff(ws, hid, "failed")
		if h["attempt"] != float64(1) {
			t.Fatalf("failed handoff = %v", h)
		}
		r := b.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "retry"})
		if st := str(r.Body, "handoff", "state"); st == "failed" || st == "cancelled" {
			t.Fatalf("retry answered %s", r.Raw)
		}
		h = a.waitHandoff(ws, hid, "completed", "failed", "interrupted")
		if h["state"] != "completed" || h["attempt"] != float64(2) {
			t.Fatalf("after the retry: %v\nA:\n%s\nB:\n%s", h, a.logs.String(), b.logs.String())
		}
	})

	t.Run("cancel through the replica that does not drive", func(t *testing.T) {
		ws := a.workspace("sonnet")
		src := a.session(ws)
		a.waitIdle(ws)
		hid := a.handoff(ws, "rep-cancel", src, "slow-ready", false)
		b.waitHandoff(ws, hid, "starting")
		// Both replicas reconcile every lease TTL: B leaves the transfer to
		// A, whose lease is live, and A's own rounds leave it running.
		waitLogCount(t, b, `"reconcile left a transfer to the live process that drives it"`, hid, 2)
		if h := a.waitHandoff(ws, hid, "starting", "interrupted", "failed"); h["state"] != "starting" {
			t.Fatalf("after two reconcile rounds: %v\nA:\n%s", h, a.logs.String())
		}
		r := b.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "cancel"})
		if st := str(r.Body, "handoff", "state"); st != "cancelled" {
			t.Fatalf("cancel through B answered %s\nA:\n%s\nB:\n%s", r.Raw, a.logs.String(), b.logs.String())
		}
		h := a.waitHandoff(ws, hid, "cancelled")
		if h["stopUnconfirmed"] == true {
			t.Fatalf("cancelled with the stop unconfirmed: %v", h)
		}
		a.waitIdle(ws)
	})
}
