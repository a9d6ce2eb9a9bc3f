package handoff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/jsonesc"
	"github.com/batonhq/baton/internal/workspace"
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
	// ErrNativeUnsupported when the target engine cannot: there is no
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
	if !baton.ValidID(r.RequestID) {
		return baton.Errorf(ErrInvalidRequest, "requestId must be 1..%d printable characters", baton.MaxIDLen)
	}
	if r.SourceSession != "" && !baton.ValidID(string(r.SourceSession)) {
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

// canonical returns the canonical JSON of r (object keys sorted, no white
// space, encoding/json's string escaping), written directly: a Request
// holds only strings and booleans, in a known shape. A blank Share is left
// out. TestFingerprintIsCanonical checks it against encoding/json on
// random requests, so the fingerprints of stored handoffs do not change.
func (r Request) canonical() []byte {
	str := jsonesc.AppendCanonical
	b := make([]byte, 0, 160+len(r.Workspace)+len(r.RequestID)+len(r.SourceSession))
	b = append(b, `{"generateSummary":`...)
	b = strconv.AppendBool(b, r.GenerateSummary)
	if r.Native {
		b = append(b, `,"native":true`...)
	}
	b = append(b, `,"requestId":`...)
	b = str(b, r.RequestID)
	if r.Share != "" {
		b = append(b, `,"share":`...)
		b = str(b, string(r.Share))
	}
	if r.SourceSession != "" {
		b = append(b, `,"sourceSessionId":`...)
		b = str(b, string(r.SourceSession))
	}
	t := r.Target
	b = append(b, `,"target":{`...)
	if t.Account != "" {
		b = append(b, `"account":`...)
		b = str(b, t.Account)
		b = append(b, ',')
	}
	b = append(b, `"engine":`...)
	b = str(b, t.Engine)
	if t.Model != "" {
		b = append(b, `,"model":`...)
		b = str(b, t.Model)
	}
	if t.PermissionMode != "" {
		b = append(b, `,"permissionMode":`...)
		b = str(b, t.PermissionMode)
	}
	if t.ReasoningEffort != "" {
		b = append(b, `,"reasoningEffort":`...)
		b = str(b, t.ReasoningEffort)
	}
	b = append(b, `},"workspaceId":`...)
	b = str(b, string(r.Workspace))
	return append(b, '}')
}
