//go:build linux

package exec_test

import (
	"bufio"
	"context"
	osexec "os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
)

// shellProfile runs a trivial shell child whose first line is its
// readiness line.
func shellProfile(script string) exec.Profile {
	return exec.Profile{
		Name:    "sh",
		Command: "sh",
		Fresh:   []string{"-c", script},
		Output: exec.Output{
			NativeID: []exec.Rule{{Pattern: regexp.MustCompile(`^ready (\S+)$`)}},
			Ready:    []exec.Rule{{Pattern: regexp.MustCompile(`^ready \S+$`)}},
		},
	}
}

const trivialChild = `echo "ready n1"; exec sleep 60`

// BenchmarkExecLaunch measures launch-to-confirmed-ready of a trivial child
// through the engine (transcript included) against the floor, exec.Command
// plus the wait for the same first line, interleaved in one run. It reports
// both and their ratio (target: at most 1.2). Stopping the children is not
// timed.
func BenchmarkExecLaunch(b *testing.B) {
	ctx := context.Background()
	e, err := exec.New(exec.Options{Profile: shellProfile(trivialChild), DataDir: b.TempDir(), StopGrace: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	var viaEngine, floor time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		cmd := osexec.Command("sh", "-c", trivialChild)
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready n1\n" {
			b.Fatalf("floor read %q, %v", line, err)
		}
		floor += time.Since(t0)
		b.StopTimer()
		cmd.Process.Kill()
		cmd.Wait()
		b.StartTimer()

		t0 = time.Now()
		p, err := e.Start(ctx, engine.StartRequest{Session: "bench", Prompt: "go"})
		if err != nil {
			b.Fatal(err)
		}
		if id, err := p.Ready(ctx); err != nil || id != "n1" {
			b.Fatalf("Ready = %q, %v", id, err)
		}
		viaEngine += time.Since(t0)
		b.StopTimer()
		if o, err := p.Stop(ctx); o != engine.Stopped {
			b.Fatalf("Stop = %s, %v", o, err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(viaEngine.Nanoseconds())/n, "engine-ns/launch")
	b.ReportMetric(float64(floor.Nanoseconds())/n, "floor-ns/launch")
	b.ReportMetric(float64(viaEngine)/float64(floor), "ratio")
}

// BenchmarkExecLaunchHeld measures what a two-phase start (a held child:
// /bin/sh waiting on a pipe, then exec'ing the agent) adds to a launch:
// launch-to-ready through the engine with StartRequest.Admit (admitting at
// once, so the store's admission commit is not in it) against the same
// launch without, interleaved in one run. Stopping is not timed.
func BenchmarkExecLaunchHeld(b *testing.B) {
	ctx := context.Background()
	e, err := exec.New(exec.Options{Profile: shellProfile(trivialChild), DataDir: b.TempDir(), StopGrace: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	launch := func(admit func(context.Context) error) time.Duration {
		t0 := time.Now()
		p, err := e.Start(ctx, engine.StartRequest{Session: "bench", Prompt: "go", Admit: admit})
		if err != nil {
			b.Fatal(err)
		}
		if id, err := p.Ready(ctx); err != nil || id != "n1" {
			b.Fatalf("Ready = %q, %v", id, err)
		}
		d := time.Since(t0)
		b.StopTimer()
		if o, err := p.Stop(ctx); o != engine.Stopped {
			b.Fatalf("Stop = %s, %v", o, err)
		}
		b.StartTimer()
		return d
	}
	admit := func(context.Context) error { return nil }
	var held, plain time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		plain += launch(nil)
		held += launch(admit)
	}
	n := float64(b.N)
	b.ReportMetric(float64(held.Nanoseconds())/n, "held-ns/launch")
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/launch")
	b.ReportMetric(float64(held)/float64(plain), "ratio")
}

// BenchmarkExecStop measures a confirmed stop of a child that ignores
// SIGTERM, with a 10 ms grace: SIGTERM, the grace, SIGKILL, the wait, and
// the check that nothing else of the launch runs.
func BenchmarkExecStop(b *testing.B) {
	ctx := context.Background()
	e, err := exec.New(exec.Options{Profile: shellProfile(`trap "" TERM; echo "ready n1"; exec sleep 60`), DataDir: b.TempDir(), StopGrace: 10 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	var stops time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		p, err := e.Start(ctx, engine.StartRequest{Session: "bench", Prompt: "go"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Ready(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		o, err := p.Stop(ctx)
		stops += time.Since(t0)
		if o != engine.Stopped || err != nil {
			b.Fatalf("Stop = %s, %v", o, err)
		}
		if x := p.Exit(); x.Code != -1 {
			b.Fatalf("the child was not killed: %+v", x)
		}
	}
	b.ReportMetric(float64(stops.Nanoseconds())/float64(b.N)/1e6, "ms/stop")
}
