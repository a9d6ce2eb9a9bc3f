package storetest

import (
	"context"
	"slices"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// The feed mutants ("feed-…") keep a change feed of their own beside the
// wrapped memstore, correct but for the one rule each breaks; the
// "feed-control" mutant breaks none, which shows that the feed tests fail
// a feed mutant for its bug and not for the mutant's plumbing. The notify
// mutants ("notify-…") send notifications of their own.

// isFeedMutant reports whether m keeps its own feed.
func (m *mutant) isFeedMutant() bool { return strings.HasPrefix(m.name, "feed-") }

// isNotifyMutant reports whether m sends its own notifications.
func (m *mutant) isNotifyMutant() bool { return strings.HasPrefix(m.name, "notify-") }

// mutantPending is what one Update of a feed or notify mutant wrote.
type mutantPending struct {
	order  []string
	first  map[string]store.Change
	last   map[string]store.Change
	writes []store.Change // every write, in order
	wss    []baton.WorkspaceID
}

func (p *mutantPending) add(key string, c store.Change) {
	if p.last == nil {
		p.first, p.last = map[string]store.Change{}, map[string]store.Change{}
	}
	if _, ok := p.last[key]; !ok {
		p.order = append(p.order, key)
		p.first[key] = c
	}
	p.last[key] = c
	p.writes = append(p.writes, c)
	if !slices.Contains(p.wss, c.Workspace) {
		p.wss = append(p.wss, c.Workspace)
	}
}

// changes returns the changes the mutant appends for p.
func (m *mutant) changes(p *mutantPending) []store.Change {
	switch m.name {
	case "feed-change-per-write":
		return p.writes
	case "feed-first-value":
		out := make([]store.Change, len(p.order))
		for i, k := range p.order {
			out[i] = p.first[k]
		}
		return out
	}
	out := make([]store.Change, len(p.order))
	for i, k := range p.order {
		out[i] = p.last[k]
	}
	return out
}

// numberChanges numbers changes after the mutant's feed (per workspace,
// or globally for feed-global-seq).
func (m *mutant) numberChanges(changes []store.Change) []store.Change {
	next := map[baton.WorkspaceID]int64{}
	out := make([]store.Change, len(changes))
	global := m.globalSeq
	for i, c := range changes {
		if m.name == "feed-global-seq" {
			global++
			c.Seq = global
		} else {
			if _, ok := next[c.Workspace]; !ok {
				next[c.Workspace] = m.lastSeq(c.Workspace)
			}
			next[c.Workspace]++
			c.Seq = next[c.Workspace]
		}
		out[i] = c
	}
	return out
}

func (m *mutant) lastSeq(ws baton.WorkspaceID) int64 {
	if l := m.feed[ws]; len(l) > 0 {
		return l[len(l)-1].Seq
	}
	return 0
}

// ownUpdate is Update for the feed and notify mutants: it records what fn
// writes, appends it to the mutant's feed and notifies, each as the
// mutant's bug says.
func (m *mutant) ownUpdate(ctx context.Context, fn func(store.Tx) error) error {
	m.commitMu.Lock()
	defer m.commitMu.Unlock()
	var p *mutantPending
	err := m.Store.Update(ctx, func(tx store.Tx) error {
		p = &mutantPending{}
		return fn(&mutantTx{Tx: tx, m: m, p: p})
	})
	if p == nil {
		return err
	}
	if err == nil || m.name == "feed-keeps-rolled-back" {
		m.mu.Lock()
		for _, c := range m.numberChanges(m.changes(p)) {
			if m.feed == nil {
				m.feed = map[baton.WorkspaceID][]store.Change{}
			}
			m.feed[c.Workspace] = append(m.feed[c.Workspace], c)
			m.globalSeq = max(m.globalSeq, c.Seq)
		}
		m.mu.Unlock()
	}
	switch {
	case m.name == "notify-never":
	case m.name == "notify-on-rollback":
		m.hub.Notify(p.wss)
	case err != nil:
	case m.name == "notify-ignores-workspace":
		if len(p.wss) > 0 {
			m.hub.WakeAll()
		}
	default:
		m.hub.Notify(p.wss)
	}
	return err
}

// Subscribe is memstore's, or the mutant's own for a notify mutant.
func (m *mutant) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	if m.isNotifyMutant() {
		return m.hub.Subscribe(ws)
	}
	return m.Store.(store.Notifier).Subscribe(ws)
}

// record notes a write for the mutant's feed and notifications, reading
// the record back as stored.
func (t *mutantTx) record(kind, id string) {
	if t.p == nil {
		return
	}
	var c store.Change
	switch kind {
	case "handoff":
		h, err := t.Tx.GetHandoff(baton.HandoffID(id))
		if err != nil {
			return
		}
		c = change(h)
	case "session":
		s, err := t.Tx.GetSession(baton.SessionID(id))
		if err != nil {
			return
		}
		c = change(s)
	case "instruction":
		i, err := t.Tx.GetInstruction(baton.InstructionID(id))
		if err != nil {
			return
		}
		c = change(i)
	default: // feed-for-other-kinds
		l, err := t.Tx.GetLaunch(baton.LaunchID(id))
		if err != nil {
			return
		}
		c = store.Change{Workspace: l.Workspace}
	}
	t.p.add(kind+"/"+id, c)
	if t.m.name == "notify-on-write" {
		t.m.hub.Notify([]baton.WorkspaceID{c.Workspace})
	}
}

func (t *mutantTx) PutSession(s store.Session) error {
	err := t.Tx.PutSession(s)
	if err == nil {
		t.record("session", string(s.ID))
	}
	return err
}

func (t *mutantTx) PutInstruction(i store.Instruction) error {
	err := t.Tx.PutInstruction(i)
	if err == nil {
		t.record("instruction", string(i.ID))
	}
	return err
}

func (t *mutantTx) PutLaunch(l store.Launch) error {
	err := t.Tx.PutLaunch(l)
	if err == nil && t.m.name == "feed-for-other-kinds" {
		t.record("launch", string(l.ID))
	}
	t.m.rememberLaunch(l.ID)
	return err
}

func (t *mutantTx) Changes(ws baton.WorkspaceID, after int64, limit int) ([]store.Change, error) {
	if !t.m.isFeedMutant() {
		return t.Tx.Changes(ws, after, limit)
	}
	t.m.mu.Lock()
	l := slices.Clone(t.m.feed[ws])
	if t.m.name == "feed-lists-own" && t.p != nil {
		l = append(l, t.m.numberChanges(t.m.changes(t.p))...)
	}
	t.m.mu.Unlock()
	var out []store.Change
	for _, c := range l {
		if c.Seq <= after && t.m.name != "feed-ignores-after" {
			continue
		}
		if limit > 0 && len(out) == limit && t.m.name != "feed-ignores-limit" {
			break
		}
		if t.m.name != "feed-shares-changes" {
			c = copyChange(c)
		}
		out = append(out, c)
	}
	return out, nil
}

func (t *mutantTx) LastSeq(ws baton.WorkspaceID) (int64, error) {
	if !t.m.isFeedMutant() {
		return t.Tx.LastSeq(ws)
	}
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	return t.m.lastSeq(ws), nil
}

// rememberLaunch keeps every launch id inserted (sticky-live-launches).
func (m *mutant) rememberLaunch(id baton.LaunchID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.launches, id) {
		m.launches = append(m.launches, id)
	}
}

func (t *mutantTx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	switch t.m.name {
	case "sticky-live-launches": // every launch ever inserted, live or not
		t.m.mu.Lock()
		ids := slices.Clone(t.m.launches)
		t.m.mu.Unlock()
		var out []store.Launch
		for _, id := range ids {
			l, err := t.Tx.GetLaunch(id)
			if err != nil {
				return nil, err
			}
			if ws == "" || l.Workspace == ws {
				out = append(out, l)
			}
		}
		return out, nil
	case "live-launches-ignore-workspace":
		ws = ""
	}
	return t.Tx.LiveLaunches(ws)
}

func (t *mutantTx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	l, err := t.Tx.ListInstructions(ws)
	if t.m.name == "reversed-instructions" {
		slices.Reverse(l)
	}
	return l, err
}

func (t *mutantTx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	r, err := t.Tx.GetReservation(ws)
	if t.m.name == "drops-lease-store" {
		r.LeaseStore = ""
	}
	return r, err
}

func (t *mutantTx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	w, err := t.Tx.GetWakeup(id)
	if t.m.name == "drops-wakeup-reason" {
		w.Reason = ""
	}
	return w, err
}

func (t *mutantTx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	i, err := t.Tx.GetInstruction(id)
	if t.m.name == "drops-instruction-session" {
		i.Session = ""
	}
	return i, err
}

func (t *mutantTx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	l, err := t.Tx.GetLaunch(id)
	if t.m.name == "drops-launch-epoch" {
		l.Epoch = 0
	}
	return l, err
}

// dropHandoffFields is the handoff half of the drops-… mutants.
func (m *mutant) dropHandoffFields(h store.Handoff) store.Handoff {
	switch m.name {
	case "drops-native":
		h.Native = false
	case "drops-facts":
		h.Facts = ""
	}
	return h
}

// copyChange returns c with records of its own.
func copyChange(c store.Change) store.Change {
	switch {
	case c.Handoff != nil:
		h := *c.Handoff
		h.History = slices.Clone(h.History)
		c.Handoff = &h
	case c.Session != nil:
		s := *c.Session
		c.Session = &s
	case c.Instruction != nil:
		i := *c.Instruction
		c.Instruction = &i
	}
	return c
}
