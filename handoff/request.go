package handoff

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Request asks for a session transfer.
type Request struct {
	Workspace baton.WorkspaceID `json:"workspaceId"`
	// RequestID makes the request idempotent: (Workspace, RequestID) is
	// unique forever. 1..128 bytes after trimming.
	RequestID string `json:"requestId"`
	// SourceSession must equal the workspace's current session, or be empty
	// when the workspace has none (a stale view is refused).
	SourceSession baton.SessionID `json:"sourceSessionId,omitempty"`
	// GenerateSummary asks the source to write a report first.
	GenerateSummary bool `json:"generateSummary"`
	// Target is the configuration of the fresh session.
	Target baton.EngineConfig `json:"target"`
	// Native asks for the native path: the target is the source's own
	// native session resumed under Target by an engine that can carry it
	// (engine.Reconfigurer); no report is generated. Create refuses with
	// baton.ErrUnsupported when the target engine cannot: there is no
	// silent fallback. Part of the fingerprint.
	Native bool `json:"native,omitempty"`
	// Share says what the target's briefing carries besides the record:
	// the conversation and the report, the report only, or neither (see
	// baton.Share). Blank means the workspace's setting
	// (store.Workspace.Share). A briefing goes to the target engine's
	// provider: this is the user's choice of what leaves the machine.
	// Part of the fingerprint.
	Share baton.Share `json:"share,omitempty"`
}

// normalized returns the request with white space trimmed and defaults
// filled, the form that is stored and fingerprinted.
func (r Request) normalized() Request {
	r.Workspace = baton.WorkspaceID(strings.TrimSpace(string(r.Workspace)))
	r.RequestID = strings.TrimSpace(r.RequestID)
	r.SourceSession = baton.SessionID(strings.TrimSpace(string(r.SourceSession)))
	r.Target = r.Target.Normalize()
	r.Share = baton.Share(strings.TrimSpace(string(r.Share)))
	if r.Native {
		r.GenerateSummary = false // the conversation itself moves: no report
	}
	return r
}

// validate checks the request's shape (not the engine's support).
func (r Request) validate() error {
	if err := workspace.CheckWorkspaceID(r.Workspace); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	if err := baton.CheckField("requestId", r.RequestID); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	if r.SourceSession != "" && baton.CheckField("id", string(r.SourceSession)) != nil {
		return baton.Errorf(ErrInvalidRequest, "sourceSessionId is malformed")
	}
	if err := r.Target.Validate(); err != nil {
		return fmt.Errorf("%w: target: %w", ErrInvalidRequest, err)
	}
	if err := r.Share.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// Fingerprint returns the SHA-256 of the canonical JSON of the normalised
// request minus its request id: two clients that send the same request with
// fields in another order, or with extra white space, agree.
func (r Request) fingerprint() string {
	n := r.normalized()
	n.RequestID = ""
	sum := sha256.Sum256(n.canonical())
	return hex.EncodeToString(sum[:])
}

// canonical returns the canonical JSON of r: object keys sorted (the
// fields below are declared in that order), no white space, encoding/json's
// string escaping without its HTML escaping, invalid UTF-8 written as
// U+FFFD, a blank Share and every blank optional field left out. TestFingerprintIsCanonical checks it against a
// generic re-encoding on random requests, so the fingerprints of stored
// handoffs do not change.
func (r Request) canonical() []byte {
	t := r.Target
	v := struct {
		GenerateSummary bool   `json:"generateSummary"`
		Native          bool   `json:"native,omitempty"`
		RequestID       string `json:"requestId"`
		Share           string `json:"share,omitempty"`
		SourceSession   string `json:"sourceSessionId,omitempty"`
		Target          struct {
			Account         string `json:"account,omitempty"`
			Engine          string `json:"engine"`
			Model           string `json:"model,omitempty"`
			PermissionMode  string `json:"permissionMode,omitempty"`
			ReasoningEffort string `json:"reasoningEffort,omitempty"`
		} `json:"target"`
		Workspace string `json:"workspaceId"`
	}{GenerateSummary: r.GenerateSummary, Native: r.Native, RequestID: valid(r.RequestID), Share: valid(string(r.Share)),
		SourceSession: valid(string(r.SourceSession)), Workspace: valid(string(r.Workspace))}
	v.Target.Account, v.Target.Engine, v.Target.Model = valid(t.Account), valid(t.Engine), valid(t.Model)
	v.Target.PermissionMode, v.Target.ReasoningEffort = valid(t.PermissionMode), valid(t.ReasoningEffort)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and booleans: it cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// valid replaces each byte of s that is not valid UTF-8 by U+FFFD, as
// encoding/json reads it, so that the canonical JSON writes the rune itself.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// Create requests a session transfer and returns the handoff as committed.
// The source's engine is stopped after the row is written; the rest of the
// transfer runs in the background (see Get, Current, Watch, Wait). A
// context-pressure transfer due from the same source (see "Context
// pressure") is not made then: this one takes its place.
//
// Replaying a request id with the same fingerprint returns the existing
// handoff as it is now, in any state, with no side effect: Create is safe to
// retry. Errors (nothing is stopped or reserved on any of them):
// ErrInvalidRequest (malformed; also matches engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig for a target the engines do not offer),
// session.ErrNoWorkspace, ErrIdempotencyMismatch, session.ErrArchived,
// ErrTransferPending, ErrSourceChanged, baton.ErrUnsupported (Native asked
// and the target engine cannot carry the source's session),
// session.ErrClosed, and the store's errors.
func (c *Coordinator) Create(ctx context.Context, req Request) (store.Handoff, error) {
	if err := c.live(ctx); err != nil {
		return store.Handoff{}, err
	}
	req = req.normalized()
	if err := req.validate(); err != nil {
		return store.Handoff{}, err
	}
	in := input{trigger: triggerCreate, req: req, id: baton.HandoffID(ids.New("hof")), fp: req.fingerprint()}
	h, f, err := c.apply(ctx, "", in, c.callerCheck(req, in.fp))
	if errors.Is(err, store.ErrDuplicate) {
		// A concurrent Create won the race for the request id or the
		// pending slot; run the checks again to answer as it would have.
		h, f, err = c.apply(ctx, "", in, c.callerCheck(req, in.fp))
	}
	return c.started(h, f, err)
}

// started answers a request that may start an attempt (Create, Decide):
// the row as committed, its driver started, or as it was when nothing
// changed.
func (c *Coordinator) started(h store.Handoff, f *fire, err error) (store.Handoff, error) {
	if err != nil {
		return store.Handoff{}, err
	}
	if f != nil {
		c.startDriver(h, f.owner)
	}
	return public(h), nil
}

// createCheck applies Create's guards in the order that makes an exact
// replay succeed whatever has changed since.
func (c *Coordinator) createCheck(req Request, fp string) func(*fire) error {
	return func(f *fire) error {
		tx := f.tx
		ws, err := workspace.GetWorkspace(tx, req.Workspace)
		if err != nil {
			return err
		}
		prev, err := tx.HandoffByRequest(req.Workspace, req.RequestID)
		switch {
		case err == nil && prev.Fingerprint == fp:
			return &unchanged{h: prev}
		case err == nil:
			return baton.Errorf(ErrIdempotencyMismatch, "request id %q", req.RequestID)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if ws.Archived {
			return session.ErrArchived
		}
		if p, err := tx.PendingHandoffs(req.Workspace); err != nil {
			return err
		} else if len(p) > 0 {
			return baton.Errorf(ErrTransferPending, "handoff %s is %s", p[0].ID, p[0].State)
		}
		if req.SourceSession != ws.CurrentSession {
			return baton.Errorf(ErrSourceChanged, "current session is %q", ws.CurrentSession)
		}
		if err := workspace.CheckConfig(c.engines, req.Target); err != nil {
			return fmt.Errorf("%w: target: %w", ErrInvalidRequest, err)
		}
		if req.Native {
			return c.nativeCheck(tx, ws, req)
		}
		return nil
	}
}

// nativeCheck refuses a native-path request the target engine cannot
// carry: never a silent fallback to a briefed fresh session.
func (c *Coordinator) nativeCheck(tx store.Tx, ws store.Workspace, req Request) error {
	if req.SourceSession == "" {
		return baton.Errorf(errNativeUnsupported, "the workspace has no source session to carry")
	}
	src, err := tx.GetSession(req.SourceSession)
	if err != nil {
		return err
	}
	if src.NativeID == "" {
		return baton.Errorf(errNativeUnsupported, "source session %s has no native id", src.ID)
	}
	e := c.engines[req.Target.Engine]
	r, ok := e.(engine.Reconfigurer)
	if !ok || !src.Config.SameAccount(req.Target) || !r.CanReconfigure(src.Config, req.Target) {
		return baton.Errorf(errNativeUnsupported, "engine %q cannot resume a session of %s/%s under %s/%s",
			req.Target.Engine, src.Config.Engine, src.Config.Model, req.Target.Engine, req.Target.Model)
	}
	return nil
}

// Action is a user's decision on a handoff.
type Action string

const (
	// Retry starts a new attempt, keeping a stored report (a retry with a
	// report goes straight to a new target).
	Retry Action = "retry"
	// Skip starts a new attempt without a summary, dropping the report.
	Skip Action = "skip"
	// Cancel stops whatever runs and abandons the transfer, restoring the
	// source.
	Cancel Action = "cancel"
)

// Decide applies a user's decision to a handoff of the workspace.
//
//   - On a completed or cancelled handoff every action returns it unchanged.
//   - Retry and Skip start a new attempt from failed or interrupted; they
//     return ErrTransferRunning in any other pending state, and
//     ErrStopUnconfirmed while a stop was not confirmed.
//   - Cancel behaves as Stop: cancelled when the stop is confirmed (by the
//     process that drives the transfer), failed (reservation kept,
//     StopUnconfirmed set) when it is not.
//
// The action may be written in any case, with surrounding space. Errors:
// ErrInvalidRequest (unknown action), ErrNotFound (unknown handoff
// or another workspace's), session.ErrClosed, the store's. Safe to retry: a decision
// that already took effect finds the handoff in its new state.
func (c *Coordinator) Decide(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID, action Action) (store.Handoff, error) {
	// The action is parsed case-insensitively, surrounding space ignored.
	a := Action(strings.ToLower(strings.TrimSpace(string(action))))
	if a != Retry && a != Skip && a != Cancel {
		return store.Handoff{}, baton.Errorf(ErrInvalidRequest, "unknown action %q (want retry, skip or cancel)", string(action))
	}
	if err := c.live(ctx); err != nil {
		return store.Handoff{}, err
	}
	cur, err := c.Get(ctx, ws, id)
	if err != nil {
		return store.Handoff{}, err
	}
	if cur.State.Terminal() {
		return cur, nil
	}
	if a == Cancel {
		h, _, err := c.cancel(ctx, id)
		return h, err
	}
	trig := triggerRetry
	if a == Skip {
		trig = triggerSkip
	}
	return c.started(c.apply(ctx, id, input{trigger: trig}, func(f *fire) error {
		switch h := f.row; {
		case h.State.Terminal():
			return &unchanged{h: h}
		case h.StopUnconfirmed:
			return ErrStopUnconfirmed
		case h.State != store.StateFailed && h.State != store.StateInterrupted:
			return baton.Errorf(ErrTransferRunning, "state %s", h.State)
		}
		return nil
	}))
}
