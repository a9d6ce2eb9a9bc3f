package facts

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// gatherer runs the git commands of one Gather.
type gatherer struct {
	ctx context.Context
	dir string
	o   Options
	f   *Facts
	bin string
}

func (g *gatherer) git(since time.Time) {
	bin, err := exec.LookPath(g.o.Git)
	if err != nil {
		g.f.note("No git facts: the git binary was not found (" + g.o.Git + ").")
		return
	}
	g.bin = bin
	if !g.status() {
		return
	}
	g.f.Git.Repository = true
	gf := &g.f.Git
	switch {
	case gf.Head == "":
		g.f.note("The repository has no commits yet.")
	case gf.Detached:
		g.f.note("HEAD is detached at " + short(gf.Head) + ": no branch is checked out.")
	case gf.Upstream == "":
		g.f.note("The branch " + gf.Branch + " has no upstream: ahead/behind unknown.")
	}
	if gf.Head == "" {
		return
	}
	if since.IsZero() {
		g.f.note("The session's start time is unknown: commits are not listed; the diffstat is that of the uncommitted changes.")
		gf.DiffBase = gf.Head
	} else {
		gf.Since = since.UTC()
		g.commits(since)
	}
	g.diff(since)
}

// env is the environment git runs with: the host's without the variables
// that would point git at another repository, plus settings that keep it
// read-only and non-interactive.
func env() []string {
	out := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	return append(out, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_PAGER=cat")
}

// run runs git with args in the workspace and hands each record of its
// output (split at sep, separator dropped) to each; each returning true
// ends the command early without an error.
func (g *gatherer) run(args []string, sep byte, each func(rec []byte) (stop bool)) error {
	ctx, cancel := context.WithTimeout(g.ctx, g.o.Timeout)
	defer cancel()
	timedOut := fmt.Errorf("git %s took longer than %v", args[0], g.o.Timeout)
	cmd := exec.CommandContext(ctx, g.bin, append([]string{"--no-pager", "-c", "core.quotepath=off"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = env()
	cmd.WaitDelay = time.Second
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil && g.ctx.Err() == nil {
			return timedOut
		}
		return errors.New("git could not run in " + g.dir + ": " + err.Error())
	}
	r := bufio.NewReaderSize(out, 64<<10)
	stop := false
	for err := error(nil); !stop && err == nil; {
		var rec []byte
		rec, err = r.ReadBytes(sep)
		if rec, ok := bytes.CutSuffix(rec, []byte{sep}); ok || len(rec) > 0 {
			stop = each(rec)
		}
	}
	if stop {
		cancel() // the rest of the output is not needed
		_, _ = io.Copy(io.Discard, r)
	}
	werr := cmd.Wait()
	switch {
	case stop:
		return nil
	case ctx.Err() != nil && g.ctx.Err() == nil:
		return timedOut
	case g.ctx.Err() != nil:
		return errors.New("gathering was cancelled")
	case werr != nil:
		return errors.New("git " + args[0] + ": " + cmp.Or(firstLine(string(stderr.b)), werr.Error()))
	}
	return nil
}

// line runs git with args and returns the first line of its output,
// trimmed.
func (g *gatherer) line(args ...string) (string, error) {
	var out string
	err := g.run(args, '\n', func(rec []byte) bool {
		out = strings.TrimSpace(string(rec))
		return true
	})
	return out, err
}

// status reads branch, HEAD, upstream and the uncommitted files. It reports
// false, with a note, when the directory is not a repository or git failed.
func (g *gatherer) status() bool {
	gf := &g.f.Git
	total := 0
	renamed := false // the next record is the original path of a rename
	err := g.run([]string{"status", "--porcelain=v2", "--branch", "--untracked-files=all", "-z"}, 0, func(rec []byte) bool {
		s := string(rec)
		if renamed {
			renamed = false
			if n := len(gf.Uncommitted); n > 0 && total <= g.o.MaxFiles {
				gf.Uncommitted[n-1].From = s
			}
			return false
		}
		if h, ok := strings.CutPrefix(s, "# "); ok {
			g.header(h)
			return false
		}
		var f File
		if p, ok := strings.CutPrefix(s, "? "); ok {
			f = File{Status: "??", Path: p}
		} else {
			// An ordinary, renamed or unmerged entry: the path is the
			// last of its n space-separated fields.
			n := map[string]int{"1": 9, "2": 10, "u": 11}[s[:min(1, len(s))]]
			p := strings.SplitN(s, " ", n)
			if n == 0 || len(p) < n || p[0] != s[:1] {
				return false
			}
			f, renamed = File{Status: p[1], Path: p[n-1]}, p[0] == "2"
		}
		total++
		if total <= g.o.MaxFiles {
			gf.Uncommitted = append(gf.Uncommitted, f)
		}
		return false
	})
	if err != nil {
		if strings.Contains(err.Error(), "not a git repository") {
			g.f.note("The workspace is not a git repository: no git facts.")
		} else {
			g.f.note("No git facts: " + err.Error() + ".")
		}
		return false
	}
	gf.UncommittedOmitted = total - len(gf.Uncommitted)
	return true
}

func (g *gatherer) header(h string) {
	gf := &g.f.Git
	key, val, _ := strings.Cut(h, " ")
	switch key {
	case "branch.oid":
		if val != "(initial)" {
			gf.Head = val
		}
	case "branch.head":
		if val == "(detached)" {
			gf.Detached = true
		} else {
			gf.Branch = val
		}
	case "branch.upstream":
		gf.Upstream = val
	case "branch.ab":
		a, b, _ := strings.Cut(val, " ")
		gf.Ahead, _ = strconv.Atoi(strings.TrimPrefix(a, "+"))
		gf.Behind, _ = strconv.Atoi(strings.TrimPrefix(b, "-"))
	}
}

const fieldSep = "\x1f"

// commits lists the commits made since the session started.
func (g *gatherer) commits(since time.Time) {
	gf := &g.f.Git
	after := "--since=" + since.UTC().Format(time.RFC3339)
	n, err := g.line("rev-list", "--count", after, "HEAD")
	count, _ := strconv.Atoi(n)
	if err == nil && count > 0 {
		err = g.run([]string{"log", "-z", "-n", strconv.Itoa(g.o.MaxCommits), after, "--format=%H" + fieldSep + "%s" + fieldSep + "%an" + fieldSep + "%cI", "HEAD"}, 0,
			func(rec []byte) bool {
				p := strings.SplitN(strings.TrimLeft(string(rec), "\n"), fieldSep, 4)
				if len(p) < 4 {
					return false
				}
				when, _ := time.Parse(time.RFC3339, strings.TrimSpace(p[3]))
				gf.Commits = append(gf.Commits, Commit{Hash: p[0], Subject: clip(p[1], 200), Author: clip(p[2], 100), When: when.UTC()})
				return false
			})
	}
	if err != nil {
		gf.Commits = nil
		g.f.note("The commits since the session started were left out: " + err.Error() + ".")
		return
	}
	gf.CommitsOmitted = max(0, count-len(gf.Commits))
}

// diff takes the diffstat from the last commit before since (or HEAD) to
// the working tree.
func (g *gatherer) diff(since time.Time) {
	gf := &g.f.Git
	if gf.DiffBase == "" {
		base, err := g.line("rev-list", "-1", "--before="+since.UTC().Format(time.RFC3339), "HEAD")
		if err != nil {
			g.f.note("The diffstat was left out: " + err.Error() + ".")
			return
		}
		if base == "" {
			// Every commit is newer than the session: diff from nothing.
			base, _ = g.line("hash-object", "-t", "tree", os.DevNull)
		}
		gf.DiffBase = base
	}
	var files []DiffFile
	changed, ins, del := 0, 0, 0
	err := g.run([]string{"diff", "--numstat", "--no-renames", "-z", gf.DiffBase, "--"}, 0, func(rec []byte) bool {
		a, rest, ok1 := bytes.Cut(rec, []byte{'\t'})
		d, path, ok2 := bytes.Cut(rest, []byte{'\t'})
		if !ok1 || !ok2 {
			return false
		}
		f := DiffFile{Path: string(path)}
		if string(a) == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(string(a))
			f.Deleted, _ = strconv.Atoi(string(d))
		}
		changed++
		ins += f.Added
		del += f.Deleted
		if len(files) < g.o.MaxDiffFiles {
			files = append(files, f)
		}
		return false
	})
	if err != nil {
		g.f.note("The diffstat was left out: " + err.Error() + ".")
		return
	}
	gf.Diff, gf.DiffOmitted, gf.FilesChanged, gf.Insertions, gf.Deletions = files, changed-len(files), changed, ins, del
}

// limitedBuffer keeps the first 1 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 1024 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(strings.TrimPrefix(s, "fatal: "), 200)
}

// clip returns s cut to n runes, with "…" when cut, and valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	c := 0
	for i := range s {
		if c >= n-1 {
			return s[:i] + "…"
		}
		c++
	}
	return s
}

// short is a commit hash cut to 12 hex digits.
func short(h string) string { return h[:min(len(h), 12)] }
