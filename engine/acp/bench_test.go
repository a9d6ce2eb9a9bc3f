//go:build linux

package acp_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	osexec "os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// handClient is the by-hand client of BenchmarkLaunchToReady: it signals
// the first update of the agent's work and refuses everything else.
type handClient struct {
	once  sync.Once
	first chan struct{}
}

func (c *handClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	u := n.Update
	if u.AgentMessageChunk != nil || u.AgentThoughtChunk != nil || u.ToolCall != nil || u.ToolCallUpdate != nil || u.Plan != nil {
		c.once.Do(func() { close(c.first) })
	}
	return nil
}

func (c *handClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *handClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}

func (c *handClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}

func (c *handClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}

func (c *handClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}

func (c *handClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}

func (c *handClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}

func (c *handClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// gatedReader's reads wait until gate is closed.
type gatedReader struct {
	r    io.Reader
	gate chan struct{}
}

func (g gatedReader) Read(b []byte) (int, error) {
	<-g.gate
	return g.r.Read(b)
}

// byHand starts the agent, sends initialize, session/new and the prompt,
// and returns how long it took to the first update of the agent's work;
// the turn then ends and the agent exits (not counted).
func byHand(b *testing.B, opts acp.Options, dir, prompt string) time.Duration {
	ctx := context.Background()
	t0 := time.Now()
	cmd := osexec.Command(opts.Command, opts.Args...)
	cmd.Env, cmd.Dir, cmd.Stderr = opts.Env, dir, nil
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &handClient{first: make(chan struct{})}
	// Quiet, as the engine's: the logger is set before the reader runs.
	gate := make(chan struct{})
	conn := sdk.NewClientSideConnection(c, in, gatedReader{out, gate})
	conn.SetLogger(slog.New(slog.DiscardHandler))
	close(gate)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(prompt)}})
		done <- err
	}()
	select {
	case <-c.first:
	case err := <-done:
		b.Fatalf("the turn ended before an update: %v", err)
	}
	d := time.Since(t0)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	// An ACP agent does not end at the end of its input: end it.
	in.Close()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	return d
}

var baseCfg = baton.EngineConfig{Engine: "acp"}

// throughEngine starts a fresh session through e and returns how long it
// took to Ready; the turn then ends (not counted).
func throughEngine(b *testing.B, e *acp.Engine, dir, prompt string) time.Duration {
	ctx := context.Background()
	t0 := time.Now()
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Config: baseCfg, Mode: engine.Fresh, Dir: dir, Prompt: prompt, LaunchID: newLaunchID("bench")})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	<-p.Done()
	if x := p.Exit(); !x.Clean() {
		b.Fatalf("Exit = %+v", x)
	}
	return d
}

// BenchmarkLaunchToReady measures a fresh start's launch-to-ready through
// the engine against the same agent driven by hand (initialize,
// session/new, the prompt, up to its first update), the two interleaved in
// one run so that load drifts hit both alike: scripted (the test's agent,
// always) and claude-adapter (when BATON_ACP_CLAUDE_BIN is set, against
// the scripted Messages API). It reports engine-ms/op, hand-ms/op and
// their ratio.
func BenchmarkLaunchToReady(b *testing.B) {
	type agent struct {
		name string
		opts acp.Options
	}
	agents := []agent{{"scripted", acp.Options{Command: bins["agent"], Env: []string{"PATH=" + os.Getenv("PATH"), "ACPAGENT_DIR=" + b.TempDir()}}}}
	if bin := os.Getenv(envClaudeAdapter); bin != "" {
		api := clitest.NewMessages(b, claudeScript(nil))
		agents = append(agents, agent{"claude-adapter", acp.Options{Command: bin, Env: api.ClaudeEnv(clitest.Home(b))}})
	}
	for _, a := range agents {
		b.Run(a.name, func(b *testing.B) {
			opts := a.opts
			opts.DataDir = b.TempDir()
			e := newEngine(b, opts)
			dir := b.TempDir()
			var eng, hand time.Duration
			n := 0
			for b.Loop() {
				// Alternate the order too.
				if n%2 == 0 {
					eng += throughEngine(b, e, dir, "say hello")
					hand += byHand(b, opts, dir, "say hello")
				} else {
					hand += byHand(b, opts, dir, "say hello")
					eng += throughEngine(b, e, dir, "say hello")
				}
				n++
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(n) / 1e6 }
			b.ReportMetric(ms(eng), "engine-ms/op")
			b.ReportMetric(ms(hand), "hand-ms/op")
			b.ReportMetric(float64(eng)/float64(hand), "engine/hand")
		})
	}
}
