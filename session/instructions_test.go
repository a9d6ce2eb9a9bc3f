package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// insState is an instruction reduced to what these tests compare.
type insState struct {
	Text  string
	State store.InstructionState
}

func (f *fixture) instructions() []insState {
	f.t.Helper()
	all, err := session.List[store.Instruction](f.ctx, f.svc, f.ws)
	if err != nil {
		f.t.Fatalf("Instructions: %v", err)
	}
	out := make([]insState, len(all))
	for i, in := range all {
		out[i] = insState{in.Text, in.State}
	}
	return out
}

// waitInstructions polls (bounded) until the queue reads want.
func (f *fixture) waitInstructions(want []insState) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := f.instructions()
		if cmp.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("instructions (-got +want):\n%s", cmp.Diff(got, want))
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fixture) message(text string) store.Instruction {
	f.t.Helper()
	in, err := f.svc.Message(f.ctx, f.ws, text)
	if err != nil {
		f.t.Fatalf("Message(%q): %v", text, err)
	}
	return in
}

func prompts(ls []enginetest.Launch) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Req.Prompt
	}
	return out
}

func TestMessageIdleDeliversAtOnce(t *testing.T) {
	f := newFixture(t)
	in := f.message("fix the build")
	if in.State != store.InstructionDelivered || in.Session == "" {
		t.Fatalf("instruction = %+v, want delivered to a session", in)
	}
	ls := f.launches()
	if diff := cmp.Diff([]string{"fix the build"}, prompts(ls)); diff != "" {
		t.Fatalf("prompts (-want +got):\n%s", diff)
	}
	if ls[0].Req.Session != in.Session || ls[0].Req.Turn != transcript.Normal {
		t.Fatalf("launch = %+v, want a normal turn of %s", ls[0].Req, in.Session)
	}
}

func TestMessagesWhileBusyAreDeliveredInOrder(t *testing.T) {
	f := newFixture(t)
	sess := f.start(session.TurnRequest{Prompt: "long task"})
	f.message("first")
	f.message("second")
	f.waitInstructions([]insState{{"first", store.InstructionPending}, {"second", store.InstructionPending}})

	// The running turn ends, and the queue drains one turn at a time:
	// every turn's end delivers the next instruction, whoever started it.
	f.launches()[0].Proc.Finish(0, nil)
	f.waitInstructions([]insState{{"first", store.InstructionDelivered}, {"second", store.InstructionPending}})

	ls, err := f.eng.WaitLaunches(f.ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	ls[1].Proc.Finish(0, nil) // the end of "first" delivers "second" by itself
	f.waitInstructions([]insState{{"first", store.InstructionDelivered}, {"second", store.InstructionDelivered}})
	ls, _ = f.eng.WaitLaunches(f.ctx, 3)
	if diff := cmp.Diff([]string{"long task", "first", "second"}, prompts(ls)); diff != "" {
		t.Fatalf("prompts (-want +got):\n%s", diff)
	}
	// Each turn resumed the same native session.
	for _, l := range ls[1:] {
		if l.Req.Mode != engine.Resume || l.Req.Session != sess.ID {
			t.Fatalf("launch %d = %+v, want a resume of %s", l.N, l.Req, sess.ID)
		}
	}
}

func TestMessageRefusedWhileReserved(t *testing.T) {
	f := newFixture(t)
	f.reserve("hof-1")
	_, err := f.svc.Message(f.ctx, f.ws, "hello")
	mustIs(t, err, session.ErrWorkspaceBusy)
	if got := f.instructions(); len(got) != 0 {
		t.Fatalf("queued while reserved: %+v", got)
	}
}

func TestReservationKeepsTheQueue(t *testing.T) {
	f := newFixture(t)
	f.start(session.TurnRequest{Prompt: "work"})
	f.message("queued")
	f.reserve("hof-1")
	f.launches()[0].Proc.Finish(0, nil)
	if _, ok, err := f.svc.DeliverPending(f.ctx, f.ws); err != nil || ok {
		t.Fatalf("DeliverPending while reserved = %v, %v; want nothing delivered", ok, err)
	}
	f.waitInstructions([]insState{{"queued", store.InstructionPending}})
	_, err := f.svc.ResendInstruction(f.ctx, f.ws, f.firstID())
	mustIs(t, err, session.ErrWorkspaceBusy)
	f.release("hof-1")
	// The ended turn's process leaves the workspace's slot once its end is
	// recorded: wait (bounded) for that before asking for the delivery.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, running := f.svc.Running(f.ws); !running || time.Now().After(deadline) {
			break
		}
	}
	// The turn's end may itself deliver it once the reservation is gone
	// (its hook can run after the release); either way it is delivered.
	if _, _, err := f.svc.DeliverPending(f.ctx, f.ws); err != nil {
		t.Fatalf("DeliverPending after release: %v", err)
	}
	f.waitInstructions([]insState{{"queued", store.InstructionDelivered}})
	if n := len(f.launches()); n != 2 {
		t.Fatalf("%d launches, want the turn and one delivery", n)
	}
}

func (f *fixture) firstID() baton.InstructionID {
	f.t.Helper()
	all, err := session.List[store.Instruction](f.ctx, f.svc, f.ws)
	if err != nil || len(all) == 0 {
		f.t.Fatalf("Instructions = %v, %v", all, err)
	}
	return all[0].ID
}

func TestUncertainDeliveryIsNeverRepeatedSilently(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyReject})
	in := f.message("risky")
	if in.State != store.InstructionUnknown {
		t.Fatalf("state = %s, want unknown after a rejected readiness", in.State)
	}
	if _, ok, err := f.svc.DeliverPending(f.ctx, f.ws); err != nil || ok {
		t.Fatalf("DeliverPending = %v, %v; an unknown instruction must not be redelivered", ok, err)
	}
	if n := len(f.launches()); n != 1 {
		t.Fatalf("%d launches, want 1", n)
	}
	got, err := f.svc.ResendInstruction(f.ctx, f.ws, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Resend returns the instruction as it is then. The rejected turn's
	// end delivers pending instructions too (its hook runs in the
	// background), and when that delivery takes the resent instruction
	// first, the resend finds it on its way: unknown until its readiness
	// is confirmed.
	if got.State != store.InstructionDelivered && got.State != store.InstructionUnknown {
		t.Fatalf("after resend: %s, want delivered (or unknown, on its way)", got.State)
	}
	f.waitInstructions([]insState{{"risky", store.InstructionDelivered}})
	if diff := cmp.Diff([]string{"risky", "risky"}, prompts(f.launches())); diff != "" {
		t.Fatalf("prompts (-want +got):\n%s", diff)
	}
}

func TestRefusedLaunchLeavesItPending(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{StartErr: engine.ErrAuth})
	in := f.message("hello")
	if in.State != store.InstructionPending || in.Session != "" {
		t.Fatalf("instruction = %+v, want pending again (nothing ran)", in)
	}
	if _, ok, err := f.svc.DeliverPending(f.ctx, f.ws); err != nil || !ok {
		t.Fatalf("DeliverPending = %v, %v", ok, err)
	}
	f.waitInstructions([]insState{{"hello", store.InstructionDelivered}})
}

func TestCancelAndResendRules(t *testing.T) {
	f := newFixture(t)
	f.start(session.TurnRequest{Prompt: "work"})
	queued := f.message("not this one")
	f.message("this one")
	got, err := f.svc.CancelInstruction(f.ctx, f.ws, queued.ID)
	if err != nil || got.State != store.InstructionCancelled {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	if again, err := f.svc.CancelInstruction(f.ctx, f.ws, queued.ID); err != nil || again.State != store.InstructionCancelled {
		t.Fatalf("second Cancel = %+v, %v; want idempotent", again, err)
	}
	_, err = f.svc.ResendInstruction(f.ctx, f.ws, queued.ID)
	mustIs(t, err, baton.ErrConflict)

	f.launches()[0].Proc.Finish(0, nil) // its end delivers the next one
	f.waitInstructions([]insState{{"not this one", store.InstructionCancelled}, {"this one", store.InstructionDelivered}})
	all, _ := session.List[store.Instruction](f.ctx, f.svc, f.ws)
	_, err = f.svc.CancelInstruction(f.ctx, f.ws, all[1].ID)
	mustIs(t, err, baton.ErrConflict)

	for _, id := range []baton.InstructionID{"ins-nope", all[0].ID} {
		_, err = f.svc.CancelInstruction(f.ctx, "ws-other", id)
		mustIs(t, err, baton.ErrNotFound)
	}
}

func TestMessageInvalid(t *testing.T) {
	f := newFixture(t)
	for _, text := range []string{"", "   ", string(make([]byte, baton.MaxPromptBytes+1))} {
		_, err := f.svc.Message(f.ctx, f.ws, text)
		mustIs(t, err, baton.ErrInvalid)
	}
	_, err := f.svc.Message(f.ctx, "ws-missing", "hi")
	mustIs(t, err, session.ErrNoWorkspace)
	_, err = f.svc.Message(context.Background(), f.ws, "ok")
	if err != nil {
		t.Fatal(err)
	}
}
