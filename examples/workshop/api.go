package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// routes returns the API, the page and the health checks, behind the
// security checks and the request log.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.readyz)

	mux.HandleFunc("POST /api/workspaces", s.createWorkspace)
	mux.HandleFunc("GET /api/workspaces", s.listWorkspaces)
	mux.HandleFunc("GET /api/workspaces/{ws}", s.getWorkspace)
	mux.HandleFunc("POST /api/workspaces/{ws}/sessions", s.guard(s.startSession))
	mux.HandleFunc("GET /api/workspaces/{ws}/sessions", s.listSessions)
	mux.HandleFunc("POST /api/workspaces/{ws}/messages", s.guard(s.postMessage))
	mux.HandleFunc("POST /api/workspaces/{ws}/stop", s.stop)
	mux.HandleFunc("POST /api/workspaces/{ws}/session-handoffs", s.createHandoff)
	mux.HandleFunc("GET /api/workspaces/{ws}/session-handoffs", s.listHandoffs)
	mux.HandleFunc("GET /api/workspaces/{ws}/session-handoffs/current", s.currentHandoff)
	mux.HandleFunc("GET /api/workspaces/{ws}/session-handoffs/{id}", s.getHandoff)
	mux.HandleFunc("POST /api/workspaces/{ws}/session-handoffs/{id}/decision", s.decide)
	mux.HandleFunc("POST /api/workspaces/{ws}/session-handoffs/{id}/report", s.postReport)
	mux.HandleFunc("POST /api/workspaces/{ws}/wakeups", s.guard(s.createWakeup))
	mux.HandleFunc("GET /api/workspaces/{ws}/wakeups", s.listWakeups)
	mux.HandleFunc("GET /api/workspaces/{ws}/events", s.events)
	mux.HandleFunc("GET /api/workspaces/{ws}/instructions", s.listInstructions)
	mux.HandleFunc("POST /api/workspaces/{ws}/instructions/{id}/resend", s.guard(s.resendInstruction))
	mux.HandleFunc("DELETE /api/workspaces/{ws}/instructions/{id}", s.guard(s.cancelInstruction))
	mux.HandleFunc("GET /api/machine.svg", s.machineSVG)
	mux.HandleFunc("GET /api/engines", s.listEngines)
	// The MCP endpoint real agent CLIs call during a transfer (their
	// report-only turn submits its report there). Its per-attempt token
	// travels in the X-Baton-* headers, never in Authorization.
	mux.Handle("POST /mcp", s.mcp.Handler())
	mux.Handle("GET /", s.page())
	return s.logged(s.secure(mux))
}

func (s *server) readyz(w http.ResponseWriter, _ *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "starting or stopping"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// guard is the busy guard: while a transfer is pending in the workspace, a
// mutating route other than the transfer's own and stop answers 409
// workspace-busy before it does anything.
func (s *server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws := baton.WorkspaceID(r.PathValue("ws"))
		h2, pending, err := s.co.Current(r.Context(), ws)
		if err != nil {
			writeErr(w, r, err)
			return
		}
		if pending {
			writeErr(w, r, &apiError{http.StatusConflict, "workspace-busy", "a session transfer is pending in this workspace (" + string(h2.ID) + " is " + string(h2.State) + ")"})
			return
		}
		h(w, r)
	}
}

// --- workspaces ---

type workspaceJSON struct {
	ID             baton.WorkspaceID `json:"id"`
	Name           string            `json:"name"`
	Mission        string            `json:"mission,omitempty"`
	Engine         string            `json:"engine"`
	Model          string            `json:"model"`
	CurrentSession baton.SessionID   `json:"currentSessionId"`
	Archived       bool              `json:"archived"`
	CreatedAt      time.Time         `json:"createdAt"`
	UpdatedAt      time.Time         `json:"updatedAt"`
}

func workspaceView(w store.Workspace) workspaceJSON {
	return workspaceJSON{ID: w.ID, Name: w.Name, Mission: w.Mission, Engine: w.Config.Engine, Model: w.Config.Model,
		CurrentSession: w.CurrentSession, Archived: w.Archived, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
}

func (s *server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name    string `json:"name"`
		Mission string `json:"mission"`
		Engine  string `json:"engine"`
		Model   string `json:"model"`
	}
	if !decode(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Name) == "" {
		writeErr(w, r, errBadRequest("name is required"))
		return
	}
	cfg := baton.EngineConfig{Engine: body.Engine, Model: body.Model}
	if err := s.engines.Validate(cfg); err != nil {
		writeErr(w, r, err)
		return
	}
	id := baton.WorkspaceID(randomID("ws"))
	root := s.workspaceRoot(id)
	if root != "" {
		if err := os.MkdirAll(root, 0o700); err != nil {
			writeErr(w, r, err)
			return
		}
	}
	ws, err := s.svc.CreateWorkspace(r.Context(), store.Workspace{ID: id, Name: strings.TrimSpace(body.Name), Mission: body.Mission, Root: root, Config: cfg})
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"workspace": workspaceView(ws)})
}

func (s *server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	var all []store.Workspace
	err := s.st.View(r.Context(), func(tx store.Tx) (err error) { all, err = tx.ListWorkspaces(); return err })
	if err != nil {
		writeErr(w, r, err)
		return
	}
	out := make([]workspaceJSON, 0, len(all))
	for _, ws := range all {
		out = append(out, workspaceView(ws))
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspaces": out})
}

func (s *server) getWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, err := s.svc.Workspace(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	var cur *sessionJSON
	if ws.CurrentSession != "" {
		if c, err := s.svc.Current(r.Context(), ws.ID); err == nil {
			v := sessionView(c, ws.CurrentSession)
			cur = &v
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspace": workspaceView(ws), "currentSession": cur})
}

// --- sessions ---

type sessionJSON struct {
	ID              baton.SessionID     `json:"id"`
	Engine          string              `json:"engine"`
	Model           string              `json:"model"`
	NativeID        string              `json:"nativeId"`
	Status          store.SessionStatus `json:"status"`
	ActivationOrder int64               `json:"activationOrder"`
	// Current is set in lists and lookups; an event's session leaves it
	// out (the feed says what changed, not what is current now).
	Current   *bool      `json:"current,omitempty"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	EndReason string     `json:"endReason,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
}

func sessionView(x store.Session, current baton.SessionID) sessionJSON {
	v := sessionJSON{ID: x.ID, Engine: x.Config.Engine, Model: x.Config.Model, NativeID: x.NativeID, Status: x.Status,
		ActivationOrder: x.ActivationOrder, EndReason: x.EndReason, CreatedAt: x.CreatedAt}
	if current != "" {
		c := x.ID == current
		v.Current = &c
	}
	if !x.StartedAt.IsZero() {
		v.StartedAt = &x.StartedAt
	}
	if !x.EndedAt.IsZero() {
		v.EndedAt = &x.EndedAt
	}
	return v
}

func (s *server) startSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prompt string `json:"prompt"`
	}
	if !decode(w, r, &body) {
		return
	}
	ws := baton.WorkspaceID(r.PathValue("ws"))
	sess, err := s.svc.Start(r.Context(), session.TurnRequest{Workspace: ws, Prompt: body.Prompt})
	if err != nil {
		writeErr(w, r, err)
		return
	}
	s.nudge(ws)
	writeJSON(w, http.StatusCreated, map[string]any{"session": sessionView(sess, sess.ID)})
}

func (s *server) listSessions(w http.ResponseWriter, r *http.Request) {
	ws := baton.WorkspaceID(r.PathValue("ws"))
	wsRec, err := s.svc.Workspace(r.Context(), ws)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	all, err := s.svc.Sessions(r.Context(), ws)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	out := make([]sessionJSON, 0, len(all))
	for _, x := range all {
		out = append(out, sessionView(x, wsRec.CurrentSession))
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (s *server) postMessage(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text string `json:"text"`
	}
	if !decode(w, r, &body) {
		return
	}
	in, err := s.svc.Message(r.Context(), baton.WorkspaceID(r.PathValue("ws")), body.Text)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"instruction": instructionView(in)})
}

func (s *server) stop(w http.ResponseWriter, r *http.Request) {
	if !decodeEmpty(w, r) {
		return
	}
	out, err := s.co.Stop(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"outcome": out})
}

// --- handoffs ---

// handoffJSON is a handoff as the API renders it: the SDK's public view
// (which holds no token material) and the stored report.
type handoffJSON struct {
	handoff.Handoff
	Report  string        `json:"report,omitempty"`
	History []attemptJSON `json:"history"`
}

// attemptJSON is how one attempt of a handoff ended.
type attemptJSON struct {
	Attempt         int                `json:"attempt"`
	TargetSessionID baton.SessionID    `json:"targetSessionId,omitempty"`
	Outcome         store.HandoffState `json:"outcome"`
	Error           string             `json:"error,omitempty"`
	EndedAt         time.Time          `json:"endedAt"`
}

func handoffView(h handoff.Handoff) handoffJSON {
	v := handoffJSON{Handoff: h, Report: h.Report, History: make([]attemptJSON, 0, len(h.History))}
	for _, a := range h.History {
		v.History = append(v.History, attemptJSON{a.Attempt, a.TargetSession, a.Outcome, a.Error, a.EndedAt})
	}
	return v
}

type targetJSON struct {
	Engine          string `json:"engine"`
	Model           string `json:"model"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	PermissionMode  string `json:"permissionMode,omitempty"`
}

func (s *server) createHandoff(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RequestID       string          `json:"requestId"`
		SourceSessionID baton.SessionID `json:"sourceSessionId"`
		GenerateSummary bool            `json:"generateSummary"`
		Native          bool            `json:"native"`
		Target          targetJSON      `json:"target"`
	}
	if !decode(w, r, &body) {
		return
	}
	h, err := s.co.Create(r.Context(), handoff.Request{
		Workspace: baton.WorkspaceID(r.PathValue("ws")), RequestID: body.RequestID, SourceSession: body.SourceSessionID,
		GenerateSummary: body.GenerateSummary, Native: body.Native,
		Target: baton.EngineConfig{Engine: body.Target.Engine, Model: body.Target.Model, ReasoningEffort: body.Target.ReasoningEffort, PermissionMode: body.Target.PermissionMode},
	})
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"handoff": handoffView(h)})
}

func (s *server) listHandoffs(w http.ResponseWriter, r *http.Request) {
	all, err := s.co.List(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	out := make([]handoffJSON, 0, len(all))
	for _, h := range all {
		out = append(out, handoffView(h))
	}
	writeJSON(w, http.StatusOK, map[string]any{"handoffs": out})
}

func (s *server) currentHandoff(w http.ResponseWriter, r *http.Request) {
	h, ok, err := s.co.Current(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"handoff": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"handoff": handoffView(h)})
}

func (s *server) getHandoff(w http.ResponseWriter, r *http.Request) {
	h, err := s.co.Get(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.HandoffID(r.PathValue("id")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"handoff": handoffView(h)})
}

func (s *server) decide(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Action string `json:"action"`
	}
	if !decode(w, r, &body) {
		return
	}
	h, err := s.co.Decide(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.HandoffID(r.PathValue("id")), handoff.Action(body.Action))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"handoff": handoffView(h)})
}

func (s *server) postReport(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token  string `json:"token"`
		Report string `json:"report"`
	}
	if !decode(w, r, &body) {
		return
	}
	// The length rule is checked here first, so that every caller learns
	// it (the coordinator checks the token before the text).
	if n := utf8.RuneCountInString(strings.TrimSpace(body.Report)); n == 0 || n > handoff.MaxReportChars || !utf8.ValidString(body.Report) {
		writeErr(w, r, errBadRequest(fmt.Sprintf("report must be 1..%d characters of UTF-8 after trimming", handoff.MaxReportChars)))
		return
	}
	err := s.co.SubmitReport(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.HandoffID(r.PathValue("id")), body.Token, body.Report)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"accepted": true})
}

// --- wakeups ---

type wakeupJSON struct {
	ID        baton.WakeupID     `json:"id"`
	SessionID baton.SessionID    `json:"sessionId,omitempty"`
	Prompt    string             `json:"prompt"`
	At        time.Time          `json:"at"`
	Status    store.WakeupStatus `json:"status"`
	Reason    string             `json:"reason,omitempty"`
	CreatedAt time.Time          `json:"createdAt"`
}

func wakeupView(x store.Wakeup) wakeupJSON {
	return wakeupJSON{ID: x.ID, SessionID: x.Session, Prompt: x.Prompt, At: x.At, Status: x.Status, Reason: x.Reason, CreatedAt: x.CreatedAt}
}

func (s *server) createWakeup(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SessionID baton.SessionID `json:"sessionId"`
		Prompt    string          `json:"prompt"`
		At        time.Time       `json:"at"`
	}
	if !decode(w, r, &body) {
		return
	}
	x, err := s.svc.ScheduleWakeup(r.Context(), store.Wakeup{Workspace: baton.WorkspaceID(r.PathValue("ws")), Session: body.SessionID, Prompt: body.Prompt, At: body.At})
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"wakeup": wakeupView(x)})
}

func (s *server) listWakeups(w http.ResponseWriter, r *http.Request) {
	all, err := s.svc.Wakeups(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	out := make([]wakeupJSON, 0, len(all))
	for _, x := range all {
		out = append(out, wakeupView(x))
	}
	writeJSON(w, http.StatusOK, map[string]any{"wakeups": out})
}

// --- instructions ---

type instructionJSON struct {
	ID        baton.InstructionID    `json:"id"`
	Text      string                 `json:"text"`
	State     store.InstructionState `json:"state"`
	SessionID baton.SessionID        `json:"sessionId,omitempty"`
	CreatedAt time.Time              `json:"createdAt"`
	UpdatedAt time.Time              `json:"updatedAt"`
}

func instructionView(x store.Instruction) instructionJSON {
	return instructionJSON{ID: x.ID, Text: x.Text, State: x.State, SessionID: x.Session, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt}
}

func (s *server) listInstructions(w http.ResponseWriter, r *http.Request) {
	all, err := s.svc.Instructions(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	out := make([]instructionJSON, 0, len(all))
	for _, x := range all {
		out = append(out, instructionView(x))
	}
	writeJSON(w, http.StatusOK, map[string]any{"instructions": out})
}

func (s *server) resendInstruction(w http.ResponseWriter, r *http.Request) {
	if !decodeEmpty(w, r) {
		return
	}
	x, err := s.svc.ResendInstruction(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.InstructionID(r.PathValue("id")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"instruction": instructionView(x)})
}

func (s *server) cancelInstruction(w http.ResponseWriter, r *http.Request) {
	if _, err := s.svc.CancelInstruction(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.InstructionID(r.PathValue("id"))); err != nil {
		writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) listEngines(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"engines": s.engines.Names(),
		"demoModels": []string{"demo-1", "demo-2", modelFailReady, modelExitEarly, modelNoReport, modelHangStop, modelSlowReady}})
}

// --- JSON helpers ---

// decode reads a JSON body of at most maxBody bytes into v, refusing
// unknown fields and trailing data; it answers the error itself and
// reports whether to go on.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("trailing data after the JSON value")
		}
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeErr(w, r, &apiError{http.StatusRequestEntityTooLarge, "too-large", "the body is over 1 MiB"})
		return false
	case errors.Is(err, io.EOF):
		writeErr(w, r, errBadRequest("a JSON body is required"))
		return false
	case err != nil:
		writeErr(w, r, errBadRequest("bad JSON body: "+err.Error()))
		return false
	}
	return true
}

// decodeEmpty accepts an empty body or an empty JSON object.
func decodeEmpty(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 {
		return true
	}
	var v struct{}
	return decode(w, r, &v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeErr answers err as {"error", "code"} with its mapped status.
func writeErr(w http.ResponseWriter, r *http.Request, err error) {
	status, code := httpError(err)
	if status >= 500 {
		if l := reqLog(r); l != nil {
			l.Error("request failed", zap.Error(err))
		}
	}
	writeJSON(w, status, map[string]string{"error": err.Error(), "code": code})
}
