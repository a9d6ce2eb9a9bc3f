package host

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
)

func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		wantErr error
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", 0, []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"blank lines skipped, CRLF trimmed", "\n\r\n{\"a\":1}\r\n\n", 0, []string{`{"a":1}`}, io.EOF},
		{"last line without newline", "{\"a\":1}\n{\"b\":2}", 0, []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"at the limit", long + "\n", 100, []string{long}, io.EOF},
		{"over the limit", "{}\n" + long + "x\n", 100, []string{"{}"}, ErrLineTooLong},
		{"over the limit across buffer refills", strings.Repeat("y", 200<<10) + "\n", 150 << 10, nil, ErrLineTooLong},
		{"long line within the limit", strings.Repeat("z", 200<<10) + "\n", 300 << 10, []string{strings.Repeat("z", 200<<10)}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := NewLineReader(strings.NewReader(tt.in), tt.max)
			var got []string
			var err error
			for {
				var line []byte
				line, err = lr.Next()
				if err != nil {
					break
				}
				got = append(got, string(line))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("end error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestMarshalLineIsOneLine(t *testing.T) {
	t.Parallel()
	b, err := MarshalLine(Event{Type: EventMessage, Fields: map[string]any{"text": "a\nb <&>"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != 1 || !strings.HasSuffix(string(b), "\n") {
		t.Fatalf("MarshalLine = %q: want exactly one trailing newline", b)
	}
	if !strings.Contains(string(b), "<&>") {
		t.Errorf("MarshalLine escaped HTML: %q", b)
	}
}

func TestRecordsOnTheWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"superseded without successor", HostSuperseded{Type: EventHostSuperseded, InstanceID: "host_a", Generation: 3},
			`{"type":"host_superseded","instanceId":"host_a","generation":3,"successor":null}`},
		{"superseded with successor", HostSuperseded{Type: EventHostSuperseded, InstanceID: "host_a", Generation: 3, Successor: &Successor{Socket: "/s"}},
			`{"type":"host_superseded","instanceId":"host_a","generation":3,"successor":{"socket":"/s"}}`},
		{"parked", SessionClosed{Type: EventSessionClosed, SessionID: "ses_1", Reason: ReasonHandoffParked, SessionPath: "/w/a.jsonl"},
			`{"type":"session_closed","sessionId":"ses_1","reason":"handoff_parked","sessionPath":"/w/a.jsonl"}`},
		{"event fields cannot forge the session", wireEvent{ev: Event{Type: EventMessage, Fields: map[string]any{"text": "hi", "sessionId": "forged", "id": "x", "type": "t"}}, sessionID: "ses_1"},
			`{"sessionId":"ses_1","text":"hi","type":"message"}`},
		{"path in use", Response{ID: "c1", Type: TypeResponse, Command: CmdOpenSession, Error: CodePathInUse, ErrorData: PathInUse{Owner: Owner{PID: 7, InstanceID: "host_a", Generation: 1}, RetryAfterMS: RetryAfterMS}},
			`{"id":"c1","type":"response","command":"open_session","success":false,"error":"session_path_in_use","errorData":{"owner":{"pid":7,"instanceId":"host_a","generation":1},"retry_after_ms":2000}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := MarshalLine(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(string(b), "\n"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestRemoteErrorMatchesSentinels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code string
		want error
		base error
	}{
		{CodeInvalidCommand, ErrInvalidCommand, baton.ErrInvalid},
		{CodeInvalidPath, ErrInvalidPath, baton.ErrInvalid},
		{CodeUnknownSession, ErrUnknownSession, baton.ErrNotFound},
		{CodePathInUse, ErrPathInUse, baton.ErrBusy},
		{CodeDraining, ErrDraining, baton.ErrUnavailable},
		{CodeSessionClosed, ErrSessionClosed, baton.ErrConflict},
		{CodeRuntime, ErrRuntime, baton.ErrUnavailable},
		{"from_a_newer_host", errRemote, baton.ErrInternal},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			var rec Record
			line := `{"id":"c1","type":"response","command":"open_session","success":false,"error":"` + tt.code + `","errorData":{"owner":{"pid":9},"retry_after_ms":2000}}`
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			err := rec.Err()
			if !errors.Is(err, tt.want) || !errors.Is(err, tt.base) {
				t.Fatalf("Err() = %v: want errors.Is %v and %v", err, tt.want, tt.base)
			}
			if tt.code != "from_a_newer_host" && WireCode(err) != tt.code {
				t.Errorf("WireCode(Err()) = %q, want %q", WireCode(err), tt.code)
			}
			var re *RemoteError
			if !errors.As(err, &re) {
				t.Fatal("not a *RemoteError")
			}
			p, ok := re.PathInUse()
			if ok != (tt.code == CodePathInUse) || (ok && (p.Owner.PID != 9 || p.RetryAfterMS != 2000)) {
				t.Errorf("PathInUse() = %+v, %v", p, ok)
			}
		})
	}
	if WireCode(nil) != "" || WireCode(errors.New("x")) != CodeInternal {
		t.Error("WireCode of nil or a foreign error")
	}
	if string(rawOf(t, `{"type":"agent_start","sessionId":"s"}`).Raw) != `{"type":"agent_start","sessionId":"s"}` {
		t.Error("Record.Raw does not keep the line")
	}
}

func rawOf(t *testing.T, line string) Record {
	t.Helper()
	var r Record
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	return r
}
