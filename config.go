package baton

import (
	"fmt"
	"strings"
)

// EngineConfig says which engine runs a session and how. Engine names an
// engine registered with the coordinator (for example "claude", "codex" or
// "demo"); the other fields are passed to it. The zero value is invalid.
type EngineConfig struct {
	Engine          string `json:"engine"`
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	PermissionMode  string `json:"permissionMode,omitempty"`
	// Account names the credentials the engine uses. A native session id
	// can only be resumed on the same engine and account (see
	// session.Service.Continue). Empty means the engine's default account.
	Account string `json:"account,omitempty"`
}

// Normalize returns c with surrounding white space trimmed from every field,
// so that two spellings of one configuration compare and fingerprint equal.
func (c EngineConfig) Normalize() EngineConfig {
	return EngineConfig{
		Engine:          strings.TrimSpace(c.Engine),
		Model:           strings.TrimSpace(c.Model),
		ReasoningEffort: strings.TrimSpace(c.ReasoningEffort),
		PermissionMode:  strings.TrimSpace(c.PermissionMode),
		Account:         strings.TrimSpace(c.Account),
	}
}

// Validate reports an ErrInvalid error when c names no engine or a field
// breaks its limit or rule (see CheckField: at most MaxIDLen bytes, no white
// space or control character inside, not starting with '-', so that no
// value reaches an agent CLI as a flag). Whether the engine supports c is
// the engine registry's question, not this one's.
func (c EngineConfig) Validate() error {
	n := c.Normalize()
	for _, f := range [...][2]string{{"engine", n.Engine}, {"model", n.Model}, {"reasoningEffort", n.ReasoningEffort}, {"permissionMode", n.PermissionMode}, {"account", n.Account}} {
		if err := CheckField(f[0], f[1]); err != nil {
			return fmt.Errorf("engine config: %w", err)
		}
	}
	return nil
}

// SameAccount reports whether a native session minted under c can be resumed
// under d: same engine and same account.
func (c EngineConfig) SameAccount(d EngineConfig) bool {
	c, d = c.Normalize(), d.Normalize()
	return c.Engine == d.Engine && c.Account == d.Account
}
