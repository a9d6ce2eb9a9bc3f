package host

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// A failed response a Client receives matches the sentinel of its code, and
// that sentinel maps back to the same code; its errorData is kept.
func TestRemoteErrorMatchesSentinels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code string
		want error
		base error
	}{
		{"invalid_command", ErrInvalidCommand, baton.ErrInvalid},
		{"invalid_path", ErrInvalidPath, baton.ErrInvalid},
		{"unknown_session", ErrUnknownSession, baton.ErrNotFound},
		{"session_path_in_use", ErrPathInUse, baton.ErrBusy},
		{"host_draining", ErrDraining, baton.ErrUnavailable},
		{"session_closed", ErrSessionClosed, baton.ErrConflict},
		{"runtime_error", ErrRuntime, baton.ErrUnavailable},
		{"host_closed", ErrClosed, baton.ErrUnavailable},
		{"from_a_newer_host", errRemote, baton.ErrInternal},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			var rec received
			line := `{"id":"c1","type":"response","command":"open_session","success":false,"error":"` + tt.code + `","errorData":{"owner":{"pid":9},"retry_after_ms":2000}}`
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			err := remoteErr(rec)
			if !errors.Is(err, tt.want) || !errors.Is(err, tt.base) {
				t.Fatalf("remoteErr = %v: want errors.Is %v and %v", err, tt.want, tt.base)
			}
			if tt.code != "from_a_newer_host" && codeOf(err) != tt.code {
				t.Errorf("codeOf(remoteErr) = %q, want %q", codeOf(err), tt.code)
			}
			if got := string(ErrorData(err)); got != `{"owner":{"pid":9},"retry_after_ms":2000}` {
				t.Errorf("ErrorData = %s", got)
			}
		})
	}
	if codeOf(nil) != "" || codeOf(errors.New("x")) != "internal_error" || ErrorData(errors.New("x")) != nil {
		t.Error("codeOf or ErrorData of nil or a foreign error")
	}
	if got := string(ErrorData(pathInUse(wire.Owner{PID: 7, InstanceID: "host_a", Generation: 1}, "/w/a"))); got != `{"owner":{"pid":7,"instanceId":"host_a","generation":1},"retry_after_ms":2000}` {
		t.Errorf("ErrorData of a host-side path_in_use = %s", got)
	}
}

func TestRecordKeepsTheLine(t *testing.T) {
	t.Parallel()
	line := `{"type":"host_superseded","instanceId":"host_a","generation":3,"successor":{"socket":"/s"}}`
	var w received
	if err := json.Unmarshal([]byte(line), &w); err != nil {
		t.Fatal(err)
	}
	r := w.record([]byte(line))
	if string(r.Raw) != line || r.Successor != "/s" || r.InstanceID != "host_a" || r.Generation != 3 {
		t.Errorf("record = %+v", r)
	}
}
