package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// The fault tests: a running store whose directory is removed, replaced,
// made read-only or filled must refuse every later Update with
// ErrCannotPersist, and (read-only, full) keep on a restart what it
// acknowledged before. Making a directory read-only for root, and a full
// disk, need a child process (unprivileged, or in a mount namespace of
// its own); they skip without one, and fail under CI=true.

// healthModes are the durability modes whose acknowledgements the checks
// guard: group commit, per-commit fsync, no fsync.
var healthModes = map[string]badgerstore.Options{
	"group":     {Small: true},
	"percommit": {Small: true, PerCommitSync: true},
	"nosync":    {Small: true, NoSync: true},
}

// openFaulty opens a store whose directory the test breaks: its Close
// may fail with ErrCannotPersist (badger cannot flush), and returns
// without waiting for badger (the directory is gone).
func openFaulty(t *testing.T, dir string, opts badgerstore.Options) *badgerstore.Store {
	t.Helper()
	s, err := badgerstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, badgerstore.ErrCannotPersist) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func putWorkspace(s *badgerstore.Store, id string) error {
	return s.Update(context.Background(), func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{ID: baton.WorkspaceID(id), Name: strings.Repeat("n", 2000), Config: baton.EngineConfig{Engine: "demo"}})
	})
}

// TestRemovedDirectoryRefusesWrites removes (or replaces) the directory of
// an open store: the next Update must fail, and so must every later one.
func TestRemovedDirectoryRefusesWrites(t *testing.T) {
	for name, opts := range healthModes {
		for _, fault := range []string{"removed", "replaced"} {
			t.Run(name+"/"+fault, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "s")
				s := openFaulty(t, dir, opts)
				if err := putWorkspace(s, "ws-before"); err != nil {
					t.Fatal(err)
				}
				if err := s.Health(); err != nil {
					t.Fatalf("Health before the fault: %v", err)
				}
				switch fault {
				case "removed":
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
				case "replaced":
					if err := os.Rename(dir, dir+".old"); err != nil {
						t.Fatal(err)
					}
					if err := os.Mkdir(dir, 0o700); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 3 {
					err := putWorkspace(s, fmt.Sprintf("ws-after-%d", i))
					if !errors.Is(err, badgerstore.ErrCannotPersist) || baton.ErrorCode(err) != baton.ErrUnavailable.Code {
						t.Fatalf("Update %d after the directory was %s: %v, want ErrCannotPersist", i, fault, err)
					}
				}
				if err := s.Health(); !errors.Is(err, badgerstore.ErrCannotPersist) {
					t.Fatalf("Health: %v, want ErrCannotPersist", err)
				}
				if strings.Contains(s.Health().Error(), dir) {
					t.Errorf("the error names the directory: %v", s.Health())
				}
			})
		}
	}
}

// TestHealthDetectsWithoutWrites: Health finds a removed directory by
// itself, with no Update to run a round.
func TestHealthDetectsWithoutWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s := openFaulty(t, dir, badgerstore.Options{Small: true})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(); !errors.Is(err, badgerstore.ErrCannotPersist) {
		t.Fatalf("Health after removal: %v", err)
	}
	if err := s.View(context.Background(), func(store.Tx) error { return nil }); !errors.Is(err, badgerstore.ErrCannotPersist) {
		t.Fatalf("View after Health failed: %v", err)
	}
}

// needFaultChild skips (or fails under CI=true) when the fault cannot be
// made here.
func needFaultChild(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run this fault test under CI: %s", why)
	}
	t.Skipf("skipping: %s", why)
}

// TestReadOnlyDirectory makes the directory of an open store read-only:
// Updates fail with ErrCannotPersist, and what was acknowledged before is
// there after a restart. Root ignores a directory's mode, so as root the
// test runs in a child process as user nobody.
func TestReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		if out := faultChild("readonly", filepath.Join(t.TempDir(), "s")); out != "ok" {
			t.Fatal(out)
		}
		return
	}
	base, err := os.MkdirTemp("", "baton-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	bin := filepath.Join(base, "test.bin")
	if err := copyFile(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{base, bin, dir} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestFaultChild$", "-test.v")
	cmd.Env = append(os.Environ(), "BADGER_FAULT_CHILD=readonly", "BADGER_FAULT_DIR="+filepath.Join(dir, "s"), "HOME="+base, "TMPDIR="+base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	runChild(t, cmd)
}

// TestFullDisk fills the file system of an open store (a tmpfs in a mount
// namespace of a child process): Open refuses a directory already under
// the reserve, Updates fail with ErrCannotPersist once the disk fills
// (the process is not killed), and what was acknowledged survives a
// restart once space is freed.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		needFaultChild(t, "a tmpfs in a mount namespace needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		needFaultChild(t, "no unshare(1) to make a mount namespace")
	}
	dir := t.TempDir()
	cmd := exec.Command(unshare, "-m", "--propagation", "private", os.Args[0], "-test.run=^TestFaultChild$", "-test.v")
	cmd.Env = append(os.Environ(), "BADGER_FAULT_CHILD=full", "BADGER_FAULT_DIR="+dir)
	runChild(t, cmd)
}

func runChild(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "FAULT-CHILD: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestFaultChild is the child of the fault tests (it does nothing unless
// BADGER_FAULT_CHILD is set).
func TestFaultChild(t *testing.T) {
	mode := os.Getenv("BADGER_FAULT_CHILD")
	if mode == "" {
		t.Skip("the child of TestReadOnlyDirectory and TestFullDisk")
	}
	dir := os.Getenv("BADGER_FAULT_DIR")
	if mode == "full" {
		dir = filepath.Join(dir, "mnt")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("FAULT-CHILD:", faultChild(mode, dir))
}

// faultChild runs one fault and returns "ok" or what went wrong.
func faultChild(mode, dir string) string {
	opts := badgerstore.Options{Small: true}
	var fault, unfault func() error
	switch mode {
	case "readonly":
		fault = func() error { return os.Chmod(dir, 0o500) }
		unfault = func() error { return os.Chmod(dir, 0o700) }
	case "full":
		mnt := dir
		if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
			return "mount: " + err.Error()
		}
		// A megabyte is under the reserve: Open refuses it (badger would
		// be killed by SIGBUS writing its first table).
		if _, err := badgerstore.Open(filepath.Join(mnt, "s"), opts); !errors.Is(err, badgerstore.ErrCannotPersist) {
			return fmt.Sprintf("Open on a 1 MiB tmpfs: %v, want ErrCannotPersist", err)
		}
		if err := unix.Unmount(mnt, 0); err != nil {
			return "umount: " + err.Error()
		}
		if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=40m"); err != nil {
			return "mount: " + err.Error()
		}
		defer unix.Unmount(mnt, unix.MNT_DETACH)
		filler := filepath.Join(mnt, "filler")
		if err := os.WriteFile(filler, make([]byte, 8<<20), 0o600); err != nil {
			return err.Error()
		}
		dir = filepath.Join(mnt, "s")
		fault = func() error { return nil } // the writes fill it
		unfault = func() error { return os.Remove(filler) }
	default:
		return "unknown mode " + mode
	}
	s, err := badgerstore.Open(dir, opts)
	if err != nil {
		return "Open: " + err.Error()
	}
	var acked []string
	for i := range 20 {
		id := "ws-before-" + strconv.Itoa(i)
		if err := putWorkspace(s, id); err != nil {
			return "Update before the fault: " + err.Error()
		}
		acked = append(acked, id)
	}
	if err := fault(); err != nil {
		return "fault: " + err.Error()
	}
	var failed error
	for i := range 100_000 {
		id := "ws-after-" + strconv.Itoa(i)
		if failed = putWorkspace(s, id); failed != nil {
			break
		}
		acked = append(acked, id)
	}
	switch {
	case failed == nil:
		return "100,000 Updates after the fault all succeeded"
	case !errors.Is(failed, badgerstore.ErrCannotPersist):
		return fmt.Sprintf("Update after the fault: %v, want ErrCannotPersist", failed)
	}
	if mode == "readonly" && len(acked) != 20 {
		return fmt.Sprintf("%d Updates acknowledged after the directory became read-only", len(acked)-20)
	}
	if err := putWorkspace(s, "ws-late"); !errors.Is(err, badgerstore.ErrCannotPersist) {
		return fmt.Sprintf("a later Update: %v, want ErrCannotPersist", err)
	}
	if err := s.Health(); !errors.Is(err, badgerstore.ErrCannotPersist) {
		return fmt.Sprintf("Health: %v", err)
	}
	if err := unfault(); err != nil {
		return "undo the fault: " + err.Error()
	}
	_ = s.Close() // may fail: the restart replays the log
	s, err = badgerstore.Open(dir, opts)
	if err != nil {
		return "Open after the fault: " + err.Error()
	}
	defer s.Close()
	missing := 0
	err = s.View(context.Background(), func(tx store.Tx) error {
		for _, id := range acked {
			if _, err := tx.GetWorkspace(baton.WorkspaceID(id)); errors.Is(err, store.ErrNotFound) {
				missing++
			} else if err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return "View after restart: " + err.Error()
	case missing > 0:
		return fmt.Sprintf("%d of %d acknowledged workspaces lost on restart", missing, len(acked))
	}
	return "ok"
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
