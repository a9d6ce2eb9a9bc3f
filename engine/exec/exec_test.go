//go:build linux

package exec_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/transcript"
)

// TestReadiness covers how a launch's readiness resolves, with the real
// stand-in agent as the child.
func TestReadiness(t *testing.T) {
	tests := []struct {
		name     string
		flags    []string
		req      engine.StartRequest
		wantID   string // "" means native-<launch id>
		wantErr  []error
		wantCode int
		wantExit string // substring of Exit().Err; "" means nil
		wantNat  string // Exit().NativeID
	}{
		{name: "ready", flags: []string{"-after", "exit"}, wantCode: 0},
		{name: "rejected", flags: []string{"-mode", "reject"}, wantErr: []error{engine.ErrReadyRejected}, wantCode: 1, wantExit: "exit status 1"},
		{name: "exit before ready", flags: []string{"-mode", "exit"}, wantErr: []error{engine.ErrExitedBeforeReady}, wantCode: 3, wantExit: "agent: cannot start"},
		{name: "clean exit before ready keeps the native id", flags: []string{"-mode", "exit-clean"}, wantErr: []error{engine.ErrExitedBeforeReady}, wantNat: "native-"},
		{name: "resume by native id", flags: []string{"-after", "exit"}, req: engine.StartRequest{Mode: engine.Resume, NativeID: "conv-42"}, wantID: "conv-42"},
		{name: "resume of a missing session", flags: []string{"-mode", "missing"}, req: engine.StartRequest{Mode: engine.Resume, NativeID: "gone"},
			wantErr: []error{engine.ErrExitedBeforeReady, engine.ErrSessionMissing}, wantCode: 1, wantExit: "No conversation found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			e := newEngine(t, exec.Options{Profile: agentProfile(tc.flags...)})
			req := tc.req
			launch := newLaunchID("L")
			req.Workspace, req.Session, req.LaunchID, req.Prompt = "ws", "s1", launch, "hello"
			if tc.wantNat != "" {
				tc.wantNat += string(launch)
			}
			p, err := e.Start(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			id, err := p.Ready(ctx)
			if len(tc.wantErr) == 0 {
				want := tc.wantID
				if want == "" {
					want = "native-" + string(launch)
				}
				if err != nil || id != want {
					t.Fatalf("Ready = %q, %v; want %q", id, err, want)
				}
			}
			for _, w := range tc.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("Ready error %v is not %v", err, w)
				}
			}
			x := waitDone(t, p)
			if x.Code != tc.wantCode || x.NativeID != tc.wantNat || x.Stopped {
				t.Errorf("Exit = %+v; want code %d, native id %q, not stopped", x, tc.wantCode, tc.wantNat)
			}
			if got := errText(x.Err); (tc.wantExit == "") != (got == "") || !strings.Contains(got, tc.wantExit) {
				t.Errorf("Exit().Err = %q; want it to contain %q", got, tc.wantExit)
			}
			if o, err := p.Stop(ctx); o != engine.NotRunning || err != nil {
				t.Errorf("Stop after exit = %s, %v; want not-running", o, err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReadinessTimeout: a child that never gets ready is refused when the
// launch's StartRequest.ReadyTimeout passes (engine.DefaultReadyTimeout
// when it is zero), not before (on a fake clock), and stopped.
func TestReadinessTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given time.Duration
		want  time.Duration
	}{
		{"the request's", time.Minute, time.Minute},
		{"the default", 0, engine.DefaultReadyTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			fake := clock.NewFake(time.Unix(1000, 0))
			e := newEngine(t, exec.Options{Profile: agentProfile("-mode", "hang"), Clock: fake})
			armed := fake.WaitTimers(1)
			p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi", ReadyTimeout: tc.given})
			if err != nil {
				t.Fatal(err)
			}
			<-armed
			if n := fake.PendingBy(fake.Now().Add(tc.want - time.Nanosecond)); n != 0 {
				t.Fatalf("%d timers due before %s", n, tc.want)
			}
			if n := fake.PendingBy(fake.Now().Add(tc.want)); n != 1 {
				t.Fatalf("%d timers due at %s; want the readiness timeout", n, tc.want)
			}
			fake.Advance(tc.want)
			if _, err := p.Ready(ctx); !errors.Is(err, engine.ErrReadyRejected) || !strings.Contains(err.Error(), "no readiness within "+tc.want.String()) {
				t.Fatalf("Ready error = %v; want a readiness timeout of %s", err, tc.want)
			}
			x := waitDone(t, p)
			if !x.Stopped {
				t.Errorf("Exit = %+v; want stopped", x)
			}
		})
	}
}

// TestStop covers confirmed stops: a child that honours SIGTERM, one that
// ignores it (the SIGKILL path), and one whose grandchild ignores it (the
// whole group goes).
func TestStop(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
	}{
		{name: "sigterm", flags: nil},
		{name: "sigterm ignored", flags: []string{"-ignore-term"}},
		{name: "grandchild ignores sigterm", flags: []string{"-fork"}},
		{name: "both ignore sigterm", flags: []string{"-fork", "-ignore-term"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			pidfile := filepath.Join(t.TempDir(), "pids")
			e := newEngine(t, exec.Options{Profile: agentProfile(append(tc.flags, "-pidfile", pidfile)...), StopGrace: 100 * time.Millisecond})
			p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			leader, grand := readPIDs(t, ctx, pidfile)
			if procStart(leader) == "" {
				t.Fatal("the agent does not run before Stop")
			}
			o, err := p.Stop(ctx)
			if o != engine.Stopped || err != nil {
				t.Fatalf("Stop = %s, %v; want stopped", o, err)
			}
			select {
			case <-p.Done():
			default:
				t.Fatal("Stop confirmed but Done is open")
			}
			for _, pid := range []int{leader, grand} {
				if pid != 0 && procStart(pid) != "" {
					t.Errorf("pid %d still runs after a confirmed stop", pid)
				}
			}
			if x := p.Exit(); !x.Stopped || x.Err != nil {
				t.Errorf("Exit = %+v; want stopped without error", x)
			}
			if o, err := p.Stop(ctx); o != engine.NotRunning || err != nil {
				t.Errorf("second Stop = %s, %v; want not-running", o, err)
			}
		})
	}
}

// TestLeftoversKilledAtExit: when the child exits by itself, what it left
// running in its group is killed before Done closes.
func TestLeftoversKilledAtExit(t *testing.T) {
	ctx := testCtx(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	e := newEngine(t, exec.Options{Profile: agentProfile("-fork", "-pidfile", pidfile, "-after", "exit")})
	p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	_, grand := readPIDs(t, ctx, pidfile)
	if x := waitDone(t, p); !x.Clean() {
		t.Fatalf("Exit = %+v; want clean", x)
	}
	if procStart(grand) != "" {
		t.Errorf("grandchild %d outlived its launch", grand)
	}
}

// TestPromptModes: the prompt reaches the child as an argument, on
// standard input, or in a file, and the transcript records the turn.
func TestPromptModes(t *testing.T) {
	tests := []struct {
		mode  string
		stdin bool
		fresh []string
	}{
		{"arg", false, []string{"-after", "exit", "-prompt", "{prompt}"}},
		{"stdin", true, []string{"-after", "exit", "-stdin"}},
		{"file", false, []string{"-after", "exit", "-prompt-file", "{prompt_file}"}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := testCtx(t)
			prof := agentProfile()
			prof.Fresh, prof.Stdin = tc.fresh, tc.stdin
			prof.Output.Events = func(line []byte) []transcript.Event {
				return []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.Message, Text: string(line)}}
			}
			e := newEngine(t, exec.Options{Profile: prof})
			launch := newLaunchID("L")
			p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "-dash and\nnewline", LaunchID: launch})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			if x := waitDone(t, p); !x.Clean() {
				t.Fatalf("Exit = %+v", x)
			}
			evs := events(t, e, "s1")
			var texts []string
			for _, ev := range evs {
				if ev.Kind == transcript.Message {
					texts = append(texts, ev.Speaker.String()+": "+ev.Text)
				}
			}
			want := []string{
				"User: -dash and\nnewline",
				`Agent: {"model":"","session_id":"native-` + string(launch) + `","type":"init"}`,
				`Agent: {"text":"prompt: -dash and\nnewline","type":"text"}`,
				`Agent: {"type":"ready"}`,
				`Agent: {"type":"end"}`,
			}
			if d := cmp.Diff(want, texts); d != "" {
				t.Errorf("transcript messages (-want +got):\n%s", d)
			}
			if evs[0].Kind != transcript.Lifecycle || evs[len(evs)-1].Kind != transcript.Lifecycle {
				t.Errorf("transcript does not start and end with lifecycle events: %+v", evs)
			}
		})
	}
}

// TestStartErrors: refusals at Start leave nothing running.
func TestStartErrors(t *testing.T) {
	ctx := testCtx(t)
	prof := agentProfile()
	prof.Models = []string{"small", "large"}
	e := newEngine(t, exec.Options{Profile: prof})
	noResume := agentProfile()
	noResume.Resume = nil
	e2 := newEngine(t, exec.Options{Profile: noResume})
	missing := agentProfile()
	missing.Command = filepath.Join(t.TempDir(), "no-such-agent")
	e3 := newEngine(t, exec.Options{Profile: missing})
	tests := []struct {
		name string
		e    *exec.Engine
		req  engine.StartRequest
		want error
	}{
		{"unsupported model", e, engine.StartRequest{Config: baton.EngineConfig{Engine: "agent", Model: "huge"}}, engine.ErrUnsupportedConfig},
		{"no effort flag", e, engine.StartRequest{Config: baton.EngineConfig{Engine: "agent", ReasoningEffort: "high"}}, engine.ErrUnsupportedConfig},
		{"resume without id", e, engine.StartRequest{Mode: engine.Resume}, baton.ErrInvalid},
		{"profile cannot resume", e2, engine.StartRequest{Mode: engine.Resume, NativeID: "x"}, engine.ErrUnsupportedConfig},
		{"missing program", e3, engine.StartRequest{}, baton.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.e.Start(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("Start error = %v; want %v", err, tc.want)
			}
		})
	}
}

// TestReconfigure: only a profile that says so carries a native session to
// another configuration, and only within one account.
func TestReconfigure(t *testing.T) {
	prof := agentProfile()
	prof.Models = []string{"small", "large"}
	plain := newEngine(t, exec.Options{Profile: prof})
	prof.Reconfigure = true
	native := newEngine(t, exec.Options{Profile: prof})
	small := baton.EngineConfig{Engine: "agent", Model: "small"}
	tests := []struct {
		name     string
		e        *exec.Engine
		from, to baton.EngineConfig
		want     bool
	}{
		{"profile without it", plain, small, baton.EngineConfig{Engine: "agent", Model: "large"}, false},
		{"another model", native, small, baton.EngineConfig{Engine: "agent", Model: "large"}, true},
		{"another account", native, small, baton.EngineConfig{Engine: "agent", Model: "large", Account: "b"}, false},
		{"unsupported model", native, small, baton.EngineConfig{Engine: "agent", Model: "huge"}, false},
	}
	for _, tc := range tests {
		if got := tc.e.CanReconfigure(tc.from, tc.to); got != tc.want {
			t.Errorf("%s: CanReconfigure = %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestStopTimeoutEndsTheGrace: the stop's context wins over a longer
// StopGrace. A stop whose context ends while an agent (and its
// grandchild) ignore SIGTERM reports engine.Timeout, never stopped, and
// sends SIGKILL then: the launch ends long before the grace would.
func TestStopTimeoutEndsTheGrace(t *testing.T) {
	ctx := testCtx(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	e := newEngine(t, exec.Options{Profile: agentProfile("-fork", "-ignore-term", "-pidfile", pidfile), StopGrace: time.Hour})
	p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	leader, grand := readPIDs(t, ctx, pidfile)
	sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if o, err := p.Stop(sctx); o != engine.Timeout || err == nil {
		t.Fatalf("Stop with a shorter context than the grace = %s, %v; want timeout", o, err)
	}
	x := waitDone(t, p)
	if !x.Stopped {
		t.Errorf("Exit = %+v; want stopped", x)
	}
	for _, pid := range []int{leader, grand} {
		if pid != 0 && procStart(pid) != "" {
			t.Errorf("pid %d still runs", pid)
		}
	}
	if o, err := p.Stop(ctx); o != engine.NotRunning || err != nil {
		t.Errorf("Stop after the end = %s, %v; want not-running", o, err)
	}
}

// TestConcurrentStopAndClose: concurrent Stops and a Ready agree on one
// confirmed end; Close stops what still runs and refuses later starts.
func TestConcurrentStopAndClose(t *testing.T) {
	ctx := testCtx(t)
	e := newEngine(t, exec.Options{Profile: agentProfile("-ignore-term"), StopGrace: 50 * time.Millisecond})
	p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	outcomes := make(chan engine.StopOutcome, 4)
	for range 4 {
		go func() {
			o, _ := p.Stop(ctx)
			outcomes <- o
		}()
	}
	for range 4 {
		if o := <-outcomes; !o.Confirmed() {
			t.Errorf("a concurrent Stop answered %s", o)
		}
	}
	if id, err := p.Ready(ctx); err != nil || id == "" {
		t.Errorf("Ready after the stop = %q, %v; want the id it confirmed", id, err)
	}

	q, err := e.Start(ctx, engine.StartRequest{Session: "s2", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-q.Done():
	default:
		t.Error("Close returned while a launch still ran")
	}
	if _, err := e.Start(ctx, engine.StartRequest{Session: "s3"}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Start after Close = %v; want ErrClosed", err)
	}
}

// A missing working directory is named as such, not as a missing binary.
func TestMissingDirIsNamed(t *testing.T) {
	e := newEngine(t, exec.Options{Profile: agentProfile()})
	_, err := e.Start(context.Background(), engine.StartRequest{Workspace: "ws", Session: "s", Config: baton.EngineConfig{Engine: "agent"},
		Mode: engine.Fresh, Turn: transcript.Normal, Prompt: "p", Dir: filepath.Join(t.TempDir(), "nope"), LaunchID: newLaunchID("dir")})
	if err == nil || !strings.Contains(err.Error(), "working directory") {
		t.Fatalf("Start in a missing directory: %v", err)
	}
}
