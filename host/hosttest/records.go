package hosttest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/internal/wire"
)

// Closed is the label Conn.Order ends with when the host has closed the
// connection.
const Closed = "close"

// label is the name Labels gives a record.
func label(r host.Record) string {
	switch r.Type {
	case wire.TypeResponse:
		if r.Success {
			return "response:" + r.Command
		}
		return "response:" + r.Command + ":" + r.Error
	case wire.EventSessionClosed:
		return r.Type + ":" + r.Reason
	}
	return r.Type
}

// Labels names each record compactly, in order, for order assertions: the
// event type ("agent_start"), "session_closed:<reason>" for a
// session_closed, "response:<command>" for a successful response and
// "response:<command>:<code>" for a failed one.
func Labels(rs []host.Record) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, label(r))
	}
	return out
}

// WireOrder keeps the labels of what a connection saw of one session from
// the announcement on: every host_superseded, then, after the first, the
// session's events and every response, as far as their labels start with
// one of keep, in the order they arrived. Records before the first
// host_superseded, and other sessions' events, are left out; so is
// everything when no host_superseded arrived.
func WireOrder(rs []host.Record, sessionID string, keep ...string) []string {
	var out []string
	for _, r := range rs {
		l := label(r)
		if r.Type == wire.EventHostSuperseded {
			out = append(out, l)
			continue
		}
		if len(out) == 0 || (r.SessionID != sessionID && r.Type != wire.TypeResponse) {
			continue
		}
		for _, k := range keep {
			if strings.HasPrefix(l, k) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// CheckOrder fails the test with a go-cmp diff when got is not want.
func CheckOrder(t testing.TB, got, want []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("wire order (-want +got):\n%s", d)
	}
}

// IsType matches the records of one type.
func IsType(typ string) func(host.Record) bool {
	return func(r host.Record) bool { return r.Type == typ }
}

// IsEvent matches the records of one type that belong to one session.
func IsEvent(typ, sessionID string) func(host.Record) bool {
	return func(r host.Record) bool { return r.Type == typ && r.SessionID == sessionID }
}

// IsFailure matches the responses that failed with one wire code
// ("session_closed", say).
func IsFailure(code string) func(host.Record) bool {
	return func(r host.Record) bool { return r.Type == wire.TypeResponse && r.Error == code }
}

// Holder is who holds a path, as a session_path_in_use failure says.
type Holder struct {
	PID          int
	InstanceID   string
	Generation   int
	RetryAfterMS int
}

// PathInUse decodes the ErrorData of an error matching host.ErrPathInUse;
// ok is false for any other error.
func PathInUse(err error) (h Holder, ok bool) {
	var d wire.PathInUse
	if !errors.Is(err, host.ErrPathInUse) || json.Unmarshal(host.ErrorData(err), &d) != nil {
		return Holder{}, false
	}
	return Holder{PID: d.Owner.PID, InstanceID: d.Owner.InstanceID, Generation: d.Owner.Generation, RetryAfterMS: d.RetryAfterMS}, true
}
