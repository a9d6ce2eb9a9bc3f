package facts_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/handoff/facts"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// repo is a real temporary git repository.
type repo struct {
	t   *testing.T
	dir string
}

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git(t0, "init", "-q", "-b", "main")
	return r
}

// git runs git in the repository with a fixed identity and dates, so that
// commit hashes are the same on every run.
func (r *repo) git(when time.Time, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	d := when.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada",
		"GIT_COMMITTER_EMAIL=ada@example.com", "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(when time.Time, msg string, files map[string]string) string {
	r.t.Helper()
	for name, c := range files {
		r.write(name, c)
	}
	r.git(when, "add", "-A")
	r.git(when, "commit", "-q", "-m", msg)
	return r.git(when, "rev-parse", "HEAD")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./handoff/facts -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// session builds a repository whose session started at t0+1h: one commit
// before, two after, then a staged, a modified, a deleted and an untracked
// file.
func session(t *testing.T) (*repo, time.Time) {
	r := newRepo(t)
	since := t0.Add(time.Hour)
	r.commit(t0, "initial layout", map[string]string{"README.md": "hello\n", "login/login.go": "package login\n", "old.txt": "x\n"})
	r.commit(since.Add(10*time.Minute), "poll instead of sleeping", map[string]string{"login/login_test.go": "package login\n\n// poll\n"})
	r.commit(since.Add(20*time.Minute), "document the poll `loop`\n\nbody line", map[string]string{"README.md": "hello\nworld\n"})
	r.write("login/login.go", "package login\n\nfunc Login() {}\n")
	r.git(since, "add", "login/login.go")
	r.write("README.md", "hello\nworld\nagain\n")
	if err := os.Remove(filepath.Join(r.dir, "old.txt")); err != nil {
		t.Fatal(err)
	}
	r.write("notes/new file.md", "draft\n")
	return r, since
}

func TestGatherRepository(t *testing.T) {
	r, since := session(t)
	f := facts.Gather(context.Background(), r.dir, since, facts.Options{Checks: []facts.Check{{Command: "go test ./login", ExitCode: 0, Summary: "ok"}}})
	g := f.Git
	head := r.git(since, "rev-parse", "HEAD")
	base := r.git(since, "rev-parse", "HEAD~2")
	if !g.Repository || g.Branch != "main" || g.Detached || g.Head != head {
		t.Fatalf("git = %+v, want branch main at %s", g, head)
	}
	wantFiles := []facts.File{
		{Status: ".M", Path: "README.md"},
		{Status: "M.", Path: "login/login.go"},
		{Status: ".D", Path: "old.txt"},
		{Status: "??", Path: "notes/new file.md"},
	}
	if diff := cmp.Diff(wantFiles, g.Uncommitted); diff != "" {
		t.Errorf("uncommitted (-want +got):\n%s", diff)
	}
	var subjects []string
	for _, c := range g.Commits {
		subjects = append(subjects, c.Subject)
	}
	if diff := cmp.Diff([]string{"document the poll `loop`", "poll instead of sleeping"}, subjects); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
	if g.DiffBase != base || g.FilesChanged != 4 || g.Insertions != 7 || g.Deletions != 1 {
		t.Errorf("diffstat from %s: %d files +%d -%d, want from %s: 4 files +7 -1 (%+v)", g.DiffBase, g.FilesChanged, g.Insertions, g.Deletions, base, g.Diff)
	}
	if diff := cmp.Diff([]string{"The branch main has no upstream: ahead/behind unknown."}, f.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	golden(t, "repository.golden", f.Markdown())
}

func TestGatherHonestLines(t *testing.T) {
	plain := t.TempDir()
	empty := newRepo(t)
	empty.write("a.txt", "a\n")
	detached := newRepo(t)
	first := detached.commit(t0, "one", map[string]string{"a": "1"})
	detached.commit(t0.Add(time.Minute), "two", map[string]string{"a": "2"})
	detached.git(t0, "checkout", "-q", "--detach", first)

	tests := []struct {
		name string
		dir  string
		opts facts.Options
		want string // a note
		repo bool
	}{
		{"not a repository", plain, facts.Options{}, "The workspace is not a git repository: no git facts.", false},
		{"missing git binary", plain, facts.Options{Git: filepath.Join(plain, "no-such-git")}, "No git facts: the git binary was not found", false},
		{"missing directory", filepath.Join(plain, "gone"), facts.Options{}, "No git facts: git could not run in", false},
		{"no commits yet", empty.dir, facts.Options{}, "The repository has no commits yet.", true},
		{"detached HEAD", detached.dir, facts.Options{}, "HEAD is detached at " + first[:12] + ": no branch is checked out.", true},
		{"slow git", detached.dir, facts.Options{Timeout: time.Nanosecond}, "No git facts: git status took longer than 1ns.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := facts.Gather(context.Background(), tt.dir, t0, tt.opts)
			if f.Git.Repository != tt.repo {
				t.Errorf("Repository = %v, want %v", f.Git.Repository, tt.repo)
			}
			found := false
			for _, n := range f.Notes {
				found = found || strings.HasPrefix(n, tt.want)
			}
			if !found {
				t.Errorf("notes %q: none starts with %q", f.Notes, tt.want)
			}
			md := f.Markdown()
			if !strings.Contains(md, "Note: "+tt.want) || strings.Count(md, "\n") > 12 {
				t.Errorf("markdown is not a short honest account:\n%s", md)
			}
		})
	}
}

func TestGatherUpstream(t *testing.T) {
	remote := newRepo(t)
	remote.commit(t0, "base", map[string]string{"a": "1"})
	r := &repo{t: t, dir: t.TempDir()}
	r.git(t0, "clone", "-q", remote.dir, ".")
	r.commit(t0.Add(time.Minute), "local 1", map[string]string{"b": "1"})
	r.commit(t0.Add(2*time.Minute), "local 2", map[string]string{"b": "2"})
	remote.commit(t0.Add(3*time.Minute), "remote 1", map[string]string{"c": "1"})
	r.git(t0, "fetch", "-q")
	f := facts.Gather(context.Background(), r.dir, time.Time{}, facts.Options{})
	g := f.Git
	if g.Upstream != "origin/main" || g.Ahead != 2 || g.Behind != 1 {
		t.Fatalf("upstream %q ahead %d behind %d, want origin/main 2 1", g.Upstream, g.Ahead, g.Behind)
	}
	if len(g.Commits) != 0 || g.DiffBase != g.Head || g.FilesChanged != 0 {
		t.Errorf("without a start time: commits %v, diff from %s (HEAD %s), %d files", g.Commits, g.DiffBase, g.Head, g.FilesChanged)
	}
	if !strings.Contains(f.Markdown(), "upstream `origin/main`: 2 ahead, 1 behind") {
		t.Errorf("markdown:\n%s", f.Markdown())
	}
}

func TestGatherBounds(t *testing.T) {
	r := newRepo(t)
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("src/f%02d.go", i)] = "package src\n"
	}
	r.commit(t0, "base", map[string]string{"keep": "1"})
	for i := range 7 {
		r.commit(t0.Add(time.Duration(i+1)*time.Hour), fmt.Sprintf("change %d", i), map[string]string{"keep": fmt.Sprint(i)})
	}
	r.commit(t0.Add(9*time.Hour), "many files", files)
	for i := range 30 {
		r.write(fmt.Sprintf("untracked/u%02d", i), "u\n")
	}
	var checks []facts.Check
	for i := range 9 {
		checks = append(checks, facts.Check{Command: fmt.Sprintf("go test -run T%d", i), ExitCode: i % 2})
	}
	f := facts.Gather(context.Background(), r.dir, t0.Add(30*time.Minute), facts.Options{MaxFiles: 5, MaxCommits: 3, MaxDiffFiles: 4, MaxChecks: 2, Checks: checks})
	g := f.Git
	got := []int{len(g.Uncommitted), g.UncommittedOmitted, len(g.Commits), g.CommitsOmitted, len(g.Diff), g.DiffOmitted, g.FilesChanged, len(f.Checks), f.ChecksOmitted}
	want := []int{5, 25, 3, 5, 4, 37, 41, 2, 7}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("counts [files omitted commits omitted diff omitted changed checks omitted] (-want +got):\n%s", diff)
	}
	if f.Checks[1].Command != "go test -run T8" {
		t.Errorf("checks kept %v, want the newest", f.Checks)
	}
	md := f.Markdown()
	for _, s := range []string{"- ...and 25 more files", "- ...and 5 more commits", "- ...and 37 more files", "- ...7 earlier checks omitted..."} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func TestGatherCancelled(t *testing.T) {
	r, since := session(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := facts.Gather(ctx, r.dir, since, facts.Options{})
	if f.Git.Repository || len(f.Notes) != 1 {
		t.Fatalf("cancelled gather: %+v", f)
	}
}

// TestGatherRenameAndConflict: a staged rename lists its original path,
// and a file in conflict after a merge is listed with its unmerged status.
func TestGatherRenameAndConflict(t *testing.T) {
	r := newRepo(t)
	r.commit(t0, "base", map[string]string{"a.txt": "a\n", "c.txt": "base\n"})
	r.git(t0, "checkout", "-q", "-b", "side")
	r.commit(t0, "side", map[string]string{"c.txt": "side\n"})
	r.git(t0, "checkout", "-q", "main")
	r.commit(t0, "main", map[string]string{"c.txt": "main\n"})
	cmd := exec.Command("git", "merge", "-q", "side")
	cmd.Dir, cmd.Env = r.dir, append(os.Environ(), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not conflict: %s", out)
	}
	if err := os.Mkdir(filepath.Join(r.dir, "b dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git(t0, "mv", "a.txt", "b dir/b.txt")
	got := facts.Gather(context.Background(), r.dir, time.Time{}, facts.Options{}).Git.Uncommitted
	want := []facts.File{{Status: "R.", Path: "b dir/b.txt", From: "a.txt"}, {Status: "UU", Path: "c.txt"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("uncommitted (-want +got):\n%s", d)
	}
}
