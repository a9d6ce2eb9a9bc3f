package wire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			next := Lines(strings.NewReader(tt.in), tt.max)
			var got []string
			var err error
			for {
				var line []byte
				line, err = next()
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
	b, err := EventLine("message", "ses_1", map[string]any{"text": "a\nb <&>"})
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
		{"superseded without successor", Superseded{Type: EventHostSuperseded, InstanceID: "host_a", Generation: 3},
			`{"type":"host_superseded","instanceId":"host_a","generation":3,"successor":null}`},
		{"superseded with successor", Superseded{Type: EventHostSuperseded, InstanceID: "host_a", Generation: 3, Successor: &Successor{Socket: "/s"}},
			`{"type":"host_superseded","instanceId":"host_a","generation":3,"successor":{"socket":"/s"}}`},
		{"parked", Closed{Type: EventSessionClosed, SessionID: "ses_1", Reason: ReasonHandoffParked, SessionPath: "/w/a.jsonl"},
			`{"type":"session_closed","sessionId":"ses_1","reason":"handoff_parked","sessionPath":"/w/a.jsonl"}`},
		{"state", State{SessionID: "ses_1", SessionPath: "/w/a.jsonl", Attachments: 1, Activity: &Activity{Turn: true, Queued: 2}},
			`{"sessionId":"ses_1","sessionPath":"/w/a.jsonl","attachments":1,"busy":false,"activity":{"turn":true,"tool":false,"compaction":false,"queued":2,"wakeSources":0},"hostRequests":0,"draining":false}`},
		{"path in use", Response{ID: "c1", Type: TypeResponse, Command: CmdOpenSession, Error: "session_path_in_use", ErrorData: PathInUse{Owner: Owner{PID: 7, InstanceID: "host_a", Generation: 1}, RetryAfterMS: RetryAfterMS}},
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

func TestEventFieldsCannotForgeTheSession(t *testing.T) {
	t.Parallel()
	b, err := EventLine("message", "ses_1", map[string]any{"text": "hi", "sessionId": "forged", "id": "x", "type": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"sessionId":"ses_1","text":"hi","type":"message"}`+"\n"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
