package enginetest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// submitted is one call of the Submit hook.
type submitted struct {
	Cred engine.ReportCredentials
	Text string
}

// submitLog is a Submit hook that records calls and refuses a token it was
// not told about, like the coordinator does.
type submitLog struct {
	mu    sync.Mutex
	calls []submitted
	want  engine.ReportCredentials
}

var errTokenRejected = baton.NewError(baton.ErrConflict, "test: token rejected")

func (s *submitLog) submit(ctx context.Context, cred engine.ReportCredentials, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, submitted{cred, text})
	if !cred.Token.Hash().Matches(s.want.Token) {
		return errTokenRejected
	}
	return ctx.Err()
}

func (s *submitLog) get() []submitted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]submitted(nil), s.calls...)
}

func TestReportOnlyTurns(t *testing.T) {
	tests := []struct {
		name        string
		script      enginetest.Script
		wantCalls   int
		wrongToken  bool
		wantErr     error
		wantRunning bool
		wantExit    engine.ExitStatus
	}{
		{"right token", enginetest.Script{Report: "# Report", ReportToken: enginetest.RightToken}, 1, false, nil, false, engine.ExitStatus{At: epoch}},
		{"wrong token", enginetest.Script{Report: "# Report", ReportToken: enginetest.WrongToken}, 1, true, errTokenRejected, false, engine.ExitStatus{At: epoch}},
		{"no report, clean end", enginetest.Script{Report: "# Report"}, 0, false, nil, false, engine.ExitStatus{At: epoch}},
		{"empty report is not sent", enginetest.Script{ReportToken: enginetest.RightToken}, 0, false, nil, false, engine.ExitStatus{At: epoch}},
		{"scripted exit after the report", enginetest.Script{Report: "r", ReportToken: enginetest.RightToken, ExitCode: 1, ExitErr: errBoom}, 1, false, nil, false, engine.ExitStatus{Code: 1, Err: errBoom, At: epoch}},
		{"hang after the report", enginetest.Script{Report: "r", ReportToken: enginetest.RightToken, Hang: true}, 1, false, nil, true, engine.ExitStatus{}},
		{"hang without report", enginetest.Script{Hang: true}, 0, false, nil, true, engine.ExitStatus{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, cred := reportReq("w")
			log := &submitLog{want: cred}
			e, _ := newEngine(t, enginetest.Options{Default: tt.script, Submit: log.submit})
			p := start(t, e, r)
			if got := ready(t, p); got.ID != "src-native" || got.Err != nil {
				t.Fatalf("Ready = %+v, want the resumed native id", got)
			}
			waitClosed(t, p.Reported(), "Reported")
			if !tt.wantRunning {
				waitClosed(t, p.Done(), "Done")
			}
			calls := log.get()
			if len(calls) != tt.wantCalls {
				t.Fatalf("Submit called %d times, want %d", len(calls), tt.wantCalls)
			}
			if tt.wantCalls == 1 {
				c := calls[0]
				if c.Text != tt.script.Report {
					t.Errorf("text = %q", c.Text)
				}
				// Everything but the token is the request's credentials.
				ignoreToken := cmpopts.IgnoreFields(engine.ReportCredentials{}, "Token")
				if diff := cmp.Diff(cred, c.Cred, ignoreToken); diff != "" {
					t.Errorf("credentials (-want +got):\n%s", diff)
				}
				if got := c.Cred.Token == cred.Token; got == tt.wrongToken {
					t.Errorf("submitted the request's token: %v, want %v", got, !tt.wrongToken)
				}
				if c.Cred.Token.IsZero() {
					t.Error("submitted an empty token")
				}
			}
			if err := p.ReportErr(); !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Process.ReportErr = %v, want %v", err, tt.wantErr)
			}
			if err := e.Launches()[0].ReportErr; err != p.ReportErr() {
				t.Errorf("Launch.ReportErr = %v, Process.ReportErr = %v", err, p.ReportErr())
			}
			if p.Running() != tt.wantRunning {
				t.Errorf("Running = %v, want %v", p.Running(), tt.wantRunning)
			}
			if diff := cmp.Diff(tt.wantExit, p.Exit(), cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Exit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReportWithoutSubmitHook(t *testing.T) {
	r, _ := reportReq("w")
	e, _ := newEngine(t, enginetest.Options{Default: enginetest.Script{Report: "r", ReportToken: enginetest.RightToken}})
	p := start(t, e, r)
	waitClosed(t, p.Reported(), "Reported")
	if !errors.Is(p.ReportErr(), enginetest.ErrNoSubmit) {
		t.Errorf("ReportErr = %v, want ErrNoSubmit", p.ReportErr())
	}
}

func TestReportWaitsForReadiness(t *testing.T) {
	r, cred := reportReq("w")
	log := &submitLog{want: cred}
	e, _ := newEngine(t, enginetest.Options{Default: enginetest.Script{Ready: enginetest.ReadyHold, Report: "r", ReportToken: enginetest.RightToken}, Submit: log.submit})
	p := start(t, e, r)
	if isClosed(p.Reported()) || len(log.get()) != 0 {
		t.Fatal("reported before readiness")
	}
	p.Release("")
	waitClosed(t, p.Reported(), "Reported")
	waitClosed(t, p.Done(), "Done")
	if len(log.get()) != 1 || p.ReportErr() != nil {
		t.Errorf("calls %d, ReportErr %v", len(log.get()), p.ReportErr())
	}
}

func TestNoReportWhenNotReady(t *testing.T) {
	for name, s := range map[string]enginetest.Script{
		"rejected":          {Ready: enginetest.ReadyReject, Report: "r", ReportToken: enginetest.RightToken},
		"exit before ready": {Ready: enginetest.ExitBeforeReady, Report: "r", ReportToken: enginetest.RightToken},
	} {
		t.Run(name, func(t *testing.T) {
			r, cred := reportReq("w")
			log := &submitLog{want: cred}
			e, _ := newEngine(t, enginetest.Options{Default: s, Submit: log.submit})
			p := start(t, e, r)
			waitClosed(t, p.Done(), "Done")
			e.Close() // waits for the process goroutine, so a late submission would show
			if n := len(log.get()); n != 0 || isClosed(p.Reported()) {
				t.Errorf("Submit called %d times, Reported closed %v; want none", n, isClosed(p.Reported()))
			}
		})
	}
}

// TestCloseCancelsSubmit: a Submit hook blocked on its context returns when
// Close cancels it, and Close waits for it.
func TestCloseCancelsSubmit(t *testing.T) {
	r, _ := reportReq("w")
	entered := make(chan struct{})
	var returned bool
	e, _ := newEngine(t, enginetest.Options{
		Default: enginetest.Script{Report: "r", ReportToken: enginetest.RightToken},
		Submit: func(ctx context.Context, _ engine.ReportCredentials, _ string) error {
			close(entered)
			<-ctx.Done()
			returned = true
			return ctx.Err()
		},
	})
	p := start(t, e, r)
	waitClosed(t, entered, "Submit entered")
	e.Close()
	if !returned {
		t.Fatal("Close returned before the Submit hook")
	}
	if !errors.Is(p.ReportErr(), context.Canceled) || !errors.Is(p.Exit().Err, enginetest.ErrClosed) {
		t.Errorf("ReportErr %v, Exit %+v", p.ReportErr(), p.Exit())
	}
}
