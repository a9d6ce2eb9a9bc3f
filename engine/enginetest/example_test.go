package enginetest_test

import (
	"context"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/transcript"
)

func Example() {
	ctx := context.Background()
	e := enginetest.New(enginetest.Options{})
	defer e.Close()

	// The first start's readiness is rejected; the second one works.
	e.Push(enginetest.Script{Ready: enginetest.ReadyReject}, enginetest.Script{NativeID: "sess-42"})
	req := engine.StartRequest{Workspace: "ws", Config: baton.EngineConfig{Engine: "demo"}, Mode: engine.Fresh, Turn: transcript.Normal}

	for range 2 {
		p, err := e.Start(ctx, req)
		if err != nil {
			fmt.Println("start:", err)
			return
		}
		id, err := p.Ready(ctx)
		fmt.Printf("ready: %q %v\n", id, err)
		if err != nil {
			<-p.Done()
			fmt.Println("exit code:", p.Exit().Code)
			continue
		}
		outcome, _ := p.Stop(ctx)
		fmt.Println("stop:", outcome, "confirmed:", outcome.Confirmed())
	}
	fmt.Println("launches:", len(e.Launches()), "max running in ws:", e.MaxRunning("ws"))
	// Output:
	// ready: "" engine: readiness rejected
	// exit code: 1
	// ready: "sess-42" <nil>
	// stop: stopped confirmed: true
	// launches: 2 max running in ws: 1
}

// A report-only turn submits its report through the Submit hook with the
// credentials of its start request, then ends.
func Example_reportOnly() {
	ctx := context.Background()
	e := enginetest.New(enginetest.Options{
		Default: enginetest.Script{Report: "# Handoff\nDone: parser.", ReportToken: enginetest.RightToken},
		Submit: func(_ context.Context, cred engine.ReportCredentials, text string) error {
			fmt.Printf("report for %s attempt %d: %q\n", cred.Handoff, cred.Attempt, text)
			return nil
		},
	})
	defer e.Close()

	cred := &engine.ReportCredentials{Workspace: "ws", Handoff: "hof_1", Attempt: 1, Token: baton.NewToken()}
	p, err := e.Start(ctx, engine.StartRequest{
		Workspace: "ws", Config: baton.EngineConfig{Engine: "demo"},
		Mode: engine.Resume, NativeID: "sess-42", Turn: transcript.ReportOnly, Report: cred, Attempt: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	<-p.Done()
	fmt.Println("clean exit:", p.Exit().Clean())
	// Output:
	// report for hof_1 attempt 1: "# Handoff\nDone: parser."
	// clean exit: true
}
