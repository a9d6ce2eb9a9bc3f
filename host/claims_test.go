package host

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// TestMain doubles as a claim holder: with HOST_TEST_HOLD_CLAIM=dir:path
// the test binary claims path in dir, prints "held", and waits to be
// killed. That gives the tests a real second process.
func TestMain(m *testing.M) {
	if spec := os.Getenv("HOST_TEST_HOLD_CLAIM"); spec != "" {
		holdClaim(spec)
		return
	}
	os.Exit(m.Run())
}

func holdClaim(spec string) {
	dir, path, _ := strings.Cut(spec, "|")
	cl, err := newClaims(dir, wire.Owner{PID: os.Getpid(), InstanceID: "host_helper", Generation: 4})
	if err == nil {
		_, err = cl.acquire(path)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(0)
}

func TestClaimsWithinAndAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "claims")
	a, err := newClaims(dir, wire.Owner{PID: os.Getpid(), InstanceID: "host_a", Generation: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := newClaims(dir, wire.Owner{PID: os.Getpid(), InstanceID: "host_b", Generation: 2})
	if err != nil {
		t.Fatal(err)
	}
	held, err := a.acquire("/w/one.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.acquire("/w/one.jsonl")
	wantInUse(t, err, "host_a")
	other, err := b.acquire("/w/two.jsonl")
	if err != nil {
		t.Fatalf("another path: %v", err)
	}
	held()
	held() // idempotent
	again, err := b.acquire("/w/one.jsonl")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	other()
	if _, err := newClaims("relative/dir", wire.Owner{}); !errors.Is(err, errInvalidOptions) || !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("relative claim dir: %v", err)
	}
}

func wantInUse(t *testing.T, err error, owner string) wire.PathInUse {
	t.Helper()
	if !errors.Is(err, ErrPathInUse) {
		t.Fatalf("acquire = %v, want ErrPathInUse", err)
	}
	var d wire.PathInUse
	if json.Unmarshal(ErrorData(err), &d) != nil || d.Owner.InstanceID != owner || d.RetryAfterMS != 2000 {
		t.Fatalf("errorData = %s, want owner %s and retry_after_ms 2000", ErrorData(err), owner)
	}
	return d
}

// A claim stands exactly while its owner lives: a live holder in another
// process refuses it with its identity; once that process is killed the
// claim is void at once.
func TestClaimVoidOnceOwnerDies(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "claims")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOST_TEST_HOLD_CLAIM="+dir+"|/w/held.jsonl")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said %q, %v", line, err)
	}
	me, err := newClaims(dir, wire.Owner{PID: os.Getpid(), InstanceID: "host_me", Generation: 5})
	if err != nil {
		t.Fatal(err)
	}
	_, err = me.acquire("/w/held.jsonl")
	d := wantInUse(t, err, "host_helper")
	if d.Owner.PID != cmd.Process.Pid || d.Owner.Generation != 4 {
		t.Errorf("owner = %+v, want pid %d generation 4", d.Owner, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	cl, err := me.acquire("/w/held.jsonl")
	if err != nil {
		t.Fatalf("claim of a dead owner still stands: %v", err)
	}
	cl()
}
