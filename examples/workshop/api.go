package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
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
	mux.HandleFunc("PUT /api/workspaces/{ws}/share", s.setShare)
	mux.HandleFunc("GET /api/workspaces/{ws}/pressure", s.getPressure)
	mux.HandleFunc("PUT /api/workspaces/{ws}/pressure", s.setPressure)
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
	mux.Handle("POST /mcp", validUTF8(s.mcp.Handler()))
	mux.Handle("GET /", s.page())
	return s.logged(jsonErrors(s.secure(s.bodyDeadline(mux))))
}

// readyz answers 200 while the server serves and its store can persist;
// 503 with the reason otherwise (a store that reports its health, such as
// badgerstore's, is asked each time: a removed, read-only or full data
// directory shows here before any write is refused).
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "starting or stopping"})
		return
	}
	if err := s.storeHealth(); err != nil {
		if l := reqLog(r); l != nil {
			l.Error("the store cannot persist", zap.Error(err))
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": storeReason(err)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// storeHealth asks the store whether it can persist, if it can tell.
func (s *server) storeHealth() error {
	if h, ok := s.st.(interface{ Health() error }); ok {
		return h.Health()
	}
	return nil
}

// storeReason says why the store cannot persist, in words that name no
// file: the store's own message up to its first path, if any.
func storeReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "/"); i >= 0 {
		msg = strings.TrimRight(msg[:i], " :(") + " (details in the server log)"
	}
	return msg
}

// guard is the busy guard: while a transfer is pending in the workspace, a
// mutating route other than the transfer's own and stop answers 409
// workspace-busy before it does anything.
func (s *server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.svc.AssertWritable(r.Context(), baton.WorkspaceID(r.PathValue("ws"))); err != nil {
			writeErr(w, r, err)
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
	Share          baton.Share       `json:"share"`
	CurrentSession baton.SessionID   `json:"currentSessionId"`
	Archived       bool              `json:"archived"`
	CreatedAt      time.Time         `json:"createdAt"`
	UpdatedAt      time.Time         `json:"updatedAt"`
	// Pressure is the workspace's context-pressure policy (threshold 0:
	// off).
	Pressure pressureJSON `json:"pressure"`
}

func workspaceView(w store.Workspace) workspaceJSON {
	return workspaceJSON{ID: w.ID, Name: w.Name, Mission: w.Mission, Engine: w.Config.Engine, Model: w.Config.Model, Share: cmp.Or(w.Share, baton.ShareConversation),
		CurrentSession: w.CurrentSession, Archived: w.Archived, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Pressure: pressureView(w.Pressure)}
}

// pressureJSON is a workspace's context-pressure policy
// (store.PressurePolicy): once a turn of the current session settles with
// its context window filled to Threshold (a fraction; 0 turns it off), the
// workspace hands over to a fresh session of Target (absent or blank: the
// source's own configuration), the source writing a report first when
// Report is set.
type pressureJSON struct {
	Threshold float64     `json:"threshold"`
	Target    *targetJSON `json:"target,omitempty"`
	Report    bool        `json:"report"`
}

func pressureView(p store.PressurePolicy) pressureJSON {
	v := pressureJSON{Threshold: p.Threshold, Report: p.Report}
	if t := p.Target; t != (baton.EngineConfig{}) {
		v.Target = &targetJSON{Engine: t.Engine, Model: t.Model, ReasoningEffort: t.ReasoningEffort, PermissionMode: t.PermissionMode}
	}
	return v
}

// policy is the store.PressurePolicy v says.
func (v pressureJSON) policy() store.PressurePolicy {
	p := store.PressurePolicy{Threshold: v.Threshold, Report: v.Report}
	if v.Target != nil {
		p.Target = v.Target.config()
	}
	return p
}

func (s *server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name    string `json:"name"`
		Mission string `json:"mission"`
		Engine  string `json:"engine"`
		Model   string `json:"model"`
		// Share is what the workspace's transfer briefings carry besides
		// the record (blank: the conversation and the report).
		Share baton.Share `json:"share"`
		// Pressure is the context-pressure policy; absent, the
		// -pressure-threshold flag's threshold, with the source's
		// configuration and no report.
		Pressure *pressureJSON `json:"pressure"`
	}
	if !decode(w, r, &body) {
		return
	}
	pressure := store.PressurePolicy{Threshold: s.cfg.Pressure}
	if body.Pressure != nil {
		pressure = body.Pressure.policy()
	}
	if err := body.Share.Validate(); err != nil {
		writeErr(w, r, err)
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
	ws, err := s.svc.CreateWorkspace(r.Context(), store.Workspace{ID: id, Name: strings.TrimSpace(body.Name), Mission: body.Mission, Root: root, Config: cfg, Share: body.Share, Pressure: pressure})
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"workspace": workspaceView(ws)})
}

// setShare changes what the workspace's transfer briefings carry.
func (s *server) setShare(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Share baton.Share `json:"share"`
	}
	if !decode(w, r, &body) {
		return
	}
	ws, err := s.svc.SetShare(r.Context(), baton.WorkspaceID(r.PathValue("ws")), body.Share)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspace": workspaceView(ws)})
}

// getPressure answers the workspace's context-pressure policy.
func (s *server) getPressure(w http.ResponseWriter, r *http.Request) {
	ws, err := s.svc.Workspace(r.Context(), baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pressure": pressureView(ws.Pressure)})
}

// setPressure sets the workspace's context-pressure policy, which re-arms
// it for the current session (handoff.Coordinator.SetPressure).
func (s *server) setPressure(w http.ResponseWriter, r *http.Request) {
	var body pressureJSON
	if !decode(w, r, &body) {
		return
	}
	ws, err := s.co.SetPressure(r.Context(), baton.WorkspaceID(r.PathValue("ws")), body.policy())
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspace": workspaceView(ws)})
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
	ID       baton.SessionID `json:"id"`
	Engine   string          `json:"engine"`
	Model    string          `json:"model"`
	NativeID string          `json:"nativeId"`
	// ActualModel and EngineVersion are what the engine reported it
	// really ran (the model can differ from the configured Model).
	ActualModel     string              `json:"actualModel,omitempty"`
	EngineVersion   string              `json:"engineVersion,omitempty"`
	Status          store.SessionStatus `json:"status"`
	ActivationOrder int64               `json:"activationOrder"`
	// Current is set in lists and lookups; an event's session leaves it
	// out (the feed says what changed, not what is current now).
	Current   *bool      `json:"current,omitempty"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	EndReason string     `json:"endReason,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	// Usage is how full the context window was after the session's last
	// turn that reported it (store.Session.Usage); absent when none did.
	Usage *usageJSON `json:"usage,omitempty"`
}

// usageJSON is a session's context usage: tokens in context, the window
// (0 when the engine did not say), and the launch whose turn reported it.
type usageJSON struct {
	Tokens int64          `json:"tokens"`
	Window int64          `json:"window"`
	Launch baton.LaunchID `json:"launchId,omitempty"`
}

func sessionView(x store.Session, current baton.SessionID) sessionJSON {
	v := sessionJSON{ID: x.ID, Engine: x.Config.Engine, Model: x.Config.Model, NativeID: x.NativeID, Status: x.Status,
		ActualModel: x.ActualModel, EngineVersion: x.EngineVersion, ActivationOrder: x.ActivationOrder, EndReason: x.EndReason, CreatedAt: x.CreatedAt}
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
	if x.Usage.Tokens > 0 {
		v.Usage = &usageJSON{Tokens: x.Usage.Tokens, Window: x.Usage.Window, Launch: x.Usage.Launch}
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
	all, err := session.List[store.Session](r.Context(), s.svc, ws)
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
	writeJSON(w, http.StatusAccepted, map[string]any{"instruction": in})
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

// handoffJSON is a handoff as the API renders it: the stored record as
// the Coordinator returns it (without its generation token's hash), and
// whether it holds a report.
type handoffJSON struct {
	store.Handoff
	HasReport bool                  `json:"hasReport"`
	History   []store.AttemptRecord `json:"history"` // [] rather than absent
}

func handoffView(h store.Handoff) handoffJSON {
	return handoffJSON{Handoff: h, HasReport: h.Report != "", History: append([]store.AttemptRecord{}, h.History...)}
}

type targetJSON struct {
	Engine          string `json:"engine"`
	Model           string `json:"model"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	PermissionMode  string `json:"permissionMode,omitempty"`
}

// config is the engine configuration t names.
func (t targetJSON) config() baton.EngineConfig {
	return baton.EngineConfig{Engine: t.Engine, Model: t.Model, ReasoningEffort: t.ReasoningEffort, PermissionMode: t.PermissionMode}
}

func (s *server) createHandoff(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RequestID       string          `json:"requestId"`
		SourceSessionID baton.SessionID `json:"sourceSessionId"`
		GenerateSummary bool            `json:"generateSummary"`
		Native          bool            `json:"native"`
		Target          targetJSON      `json:"target"`
		// Share overrides the workspace's setting for this transfer.
		Share baton.Share `json:"share"`
	}
	if !decode(w, r, &body) {
		return
	}
	h, err := s.co.Create(r.Context(), handoff.Request{
		Workspace: baton.WorkspaceID(r.PathValue("ws")), RequestID: body.RequestID, SourceSession: body.SourceSessionID,
		GenerateSummary: body.GenerateSummary, Native: body.Native, Share: body.Share,
		Target: body.Target.config(),
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
	if err := baton.CheckField("report", body.Report); err != nil {
		writeErr(w, r, err)
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
	writeJSON(w, http.StatusCreated, map[string]any{"wakeup": x})
}

func (s *server) listWakeups(w http.ResponseWriter, r *http.Request) {
	all, err := session.List[store.Wakeup](r.Context(), s.svc, baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"wakeups": nonNil(all)})
}

// --- instructions ---

func (s *server) listInstructions(w http.ResponseWriter, r *http.Request) {
	all, err := session.List[store.Instruction](r.Context(), s.svc, baton.WorkspaceID(r.PathValue("ws")))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"instructions": nonNil(all)})
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *server) resendInstruction(w http.ResponseWriter, r *http.Request) {
	if !decodeEmpty(w, r) {
		return
	}
	x, err := s.svc.ResendInstruction(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.InstructionID(r.PathValue("id")))
	if err != nil {
		writeErr(w, r, conflictAs(err, "instruction-cancelled"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"instruction": x})
}

func (s *server) cancelInstruction(w http.ResponseWriter, r *http.Request) {
	if _, err := s.svc.CancelInstruction(r.Context(), baton.WorkspaceID(r.PathValue("ws")), baton.InstructionID(r.PathValue("id"))); err != nil {
		writeErr(w, r, conflictAs(err, "instruction-delivered"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) listEngines(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"engines": slices.Sorted(maps.Keys(s.engines)),
		"demoModels": []string{"demo-1", "demo-2", modelFailReady, modelExitEarly, modelNoReport, modelHangStop, modelSlowReady, modelNoWindow}})
}

// --- JSON helpers ---

// decode reads a JSON body of at most maxBody bytes into v, refusing
// unknown fields, trailing data and invalid UTF-8 (raw bytes, or an
// escaped lone surrogate: encoding/json would replace either with U+FFFD,
// and the stored text would not be what was sent); it answers the error
// itself and reports whether to go on.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = checkJSONText(raw)
	}
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err = dec.Decode(v)
		if err == nil {
			if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
				err = errors.New("trailing data after the JSON value")
			}
		}
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeErr(w, r, &apiError{http.StatusRequestEntityTooLarge, "too-large", "the body is over 1 MiB"})
		return false
	case timedOut(err):
		w.Header().Set("Connection", "close")
		writeErr(w, r, &apiError{http.StatusRequestTimeout, "request-timeout", "the body did not arrive in time"})
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

// maxMCPBody bounds a /mcp body (the MCP SDK's own default limit).
const maxMCPBody = 4 << 20

// validUTF8 refuses a body that is not valid UTF-8 JSON text (see
// checkJSONText) before next reads it: the MCP SDK's decoding would
// replace the bad bytes, and a report would be stored rewritten.
func validUTF8(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMCPBody))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			writeErr(w, r, &apiError{http.StatusRequestEntityTooLarge, "too-large", fmt.Sprintf("the body is over %d bytes", maxMCPBody)})
			return
		case timedOut(err):
			writeErr(w, r, &apiError{http.StatusRequestTimeout, "request-timeout", "the body did not arrive in time"})
			return
		case err != nil:
			writeErr(w, r, errBadRequest("reading the body: "+err.Error()))
			return
		}
		if err := checkJSONText(raw); err != nil {
			writeErr(w, r, errBadRequest(err.Error()))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		next.ServeHTTP(w, r)
	})
}

// checkJSONText refuses a JSON text that is not valid UTF-8, or whose
// strings escape a lone UTF-16 surrogate (\ud800 without its pair).
func checkJSONText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("the body is not valid UTF-8")
	}
	bad := errors.New("the body escapes a lone UTF-16 surrogate (not valid UTF-8)")
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(raw):
			i++
			if raw[i] != 'u' {
				continue
			}
			u, ok := hex4(raw, i+1)
			if !ok {
				continue // the decoder refuses it
			}
			i += 4
			switch {
			case u >= 0xdc00 && u <= 0xdfff:
				return bad
			case u >= 0xd800 && u <= 0xdbff:
				if i+2 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
					return bad
				}
				if lo, ok := hex4(raw, i+3); !ok || lo < 0xdc00 || lo > 0xdfff {
					return bad
				}
				i += 6
			}
		}
	}
	return nil
}

// hex4 reads four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
	return rune(n), err == nil
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

// writeErr answers err as {"error", "code"} with its mapped status; a 5xx
// the server did not phrase itself answers a generic message with the
// request id, and err goes to the log (publicMessage).
func writeErr(w http.ResponseWriter, r *http.Request, err error) {
	status, code := httpError(err)
	if status >= 500 {
		if l := reqLog(r); l != nil {
			l.Error("request failed", zap.Error(err), zap.Int("status", status), zap.String("code", code))
		}
	}
	writeJSON(w, status, map[string]string{"error": publicMessage(err, status, code, w.Header().Get("X-Request-Id")), "code": code})
}
