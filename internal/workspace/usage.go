package workspace

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// RecordUsage sets, on row s, the context usage u that the turn of
// launch reported as it settled (its exit status's Usage), with the
// launch: the row keeps the last usage reported. A turn that reported
// none (no tokens) keeps the row's last usage, so that an engine that
// reports nothing leaves it zero. Callers call it in the transaction that
// records the turn's end, so the usage and the end commit together.
func RecordUsage(s *store.Session, u engine.Usage, launch baton.LaunchID) {
	if u.Tokens > 0 {
		s.Usage = store.Usage{Tokens: u.Tokens, Window: max(u.Window, 0), Launch: launch}
	}
}
