package handoff

import (
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// Handoff is the public view of a session transfer. It never holds the
// generation token or its hash; Report holds the stored report text but is
// left out of JSON (HasReport says whether there is one).
type Handoff struct {
	ID              baton.HandoffID       `json:"id"`
	Workspace       baton.WorkspaceID     `json:"workspaceId"`
	RequestID       string                `json:"requestId"`
	State           store.HandoffState    `json:"state"`
	Attempt         int                   `json:"attempt"`
	SourceSession   baton.SessionID       `json:"sourceSessionId"`
	TargetSession   baton.SessionID       `json:"targetSessionId"`
	SourceConfig    baton.EngineConfig    `json:"sourceConfig"`
	TargetConfig    baton.EngineConfig    `json:"targetConfig"`
	GenerateSummary bool                  `json:"generateSummary"`
	Native          bool                  `json:"native"`
	HasReport       bool                  `json:"hasReport"`
	Report          string                `json:"-"`
	ReportPath      string                `json:"reportPath"`
	Facts           string                `json:"facts,omitempty"`
	Error           string                `json:"error"`
	StopUnconfirmed bool                  `json:"stopUnconfirmed"`
	History         []store.AttemptRecord `json:"history"`
	CreatedAt       time.Time             `json:"createdAt"`
	UpdatedAt       time.Time             `json:"updatedAt"`
}

// Pending reports whether the handoff holds its workspace's pending slot.
func (h Handoff) Pending() bool { return h.State.Pending() }

func public(h store.Handoff) Handoff {
	hist := append([]store.AttemptRecord{}, h.History...)
	return Handoff{
		ID: h.ID, Workspace: h.Workspace, RequestID: h.RequestID, State: h.State, Attempt: h.Attempt,
		SourceSession: h.SourceSession, TargetSession: h.TargetSession, SourceConfig: h.SourceConfig,
		TargetConfig: h.TargetConfig, GenerateSummary: h.GenerateSummary, Native: h.Native, HasReport: h.Report != "",
		Report: h.Report, ReportPath: h.ReportPath, Facts: h.Facts, Error: h.Error, StopUnconfirmed: h.StopUnconfirmed,
		History: hist, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt,
	}
}
