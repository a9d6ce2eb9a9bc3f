package facts

import (
	"cmp"
	"context"
	"time"
)

// maxCheckChars bounds the command and the summary of a check, each, in
// characters (runes).
const maxCheckChars = 300

// Options bound what Gather collects. The zero value gives the defaults.
type Options struct {
	// MaxFiles bounds the uncommitted files listed (default 50).
	MaxFiles int
	// MaxCommits bounds the commits listed (default 30).
	MaxCommits int
	// MaxDiffFiles bounds the files of the diffstat listed
	// (default 50); the totals count every file.
	MaxDiffFiles int
	// MaxChecks bounds the checks kept (default 20): the newest are
	// kept, the oldest left out and counted.
	MaxChecks int
	// Checks are the commands and checks the source session ran, oldest
	// first, when the caller knows them (an engine that reports them).
	Checks []Check
	// Git is the git binary: a name looked up in PATH or a path
	// (default "git").
	Git string
	// Timeout bounds each git command (default 10 s).
	Timeout time.Duration
}

// withDefaults returns o with the defaults its fields' comments give.
func (o Options) withDefaults() Options {
	orDefault(&o.MaxFiles, 50)
	orDefault(&o.MaxCommits, 30)
	orDefault(&o.MaxDiffFiles, 50)
	orDefault(&o.MaxChecks, 20)
	orDefault(&o.Timeout, 10*time.Second)
	o.Git = cmp.Or(o.Git, "git")
	return o
}

// orDefault sets *v to d unless it is positive.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Check is one command or check the source session ran.
type Check struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exitCode"`
	// Summary is a short outcome ("ok", "3 tests failed"); may be empty.
	Summary string `json:"summary,omitempty"`
}

// File is one uncommitted file, as git status reports it.
type File struct {
	// Status is the two-letter porcelain status: "M." staged, ".M"
	// modified in the working tree, "??" untracked, "UU" unmerged, ...
	Status string `json:"status"`
	Path   string `json:"path"`
	// From is the original path of a rename or copy.
	From string `json:"from,omitempty"`
}

// Commit is one commit made since the session started.
type Commit struct {
	Hash    string    `json:"hash"`
	Subject string    `json:"subject"`
	Author  string    `json:"author"`
	When    time.Time `json:"when"`
}

// DiffFile is one file of the diffstat. Binary files have Binary set and
// no line counts.
type DiffFile struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Git is the state of the workspace's repository. Fields git could not
// tell are left zero; Facts.Notes says why.
type Git struct {
	// Repository reports whether the directory is in a git work tree.
	Repository bool `json:"repository"`
	// Branch is the checked-out branch; empty when Detached.
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached,omitempty"`
	// Head is the full hash of HEAD; empty before the first commit.
	Head string `json:"head,omitempty"`
	// Upstream is the branch's upstream ("origin/main"); empty when none.
	Upstream string `json:"upstream,omitempty"`
	Ahead    int    `json:"ahead,omitempty"`
	Behind   int    `json:"behind,omitempty"`

	Uncommitted        []File `json:"uncommitted"`
	UncommittedOmitted int    `json:"uncommittedOmitted,omitempty"`

	// Since is the start of the session the commits are counted from; zero
	// when the caller did not know it (then no commits are listed).
	Since          time.Time `json:"since,omitzero"`
	Commits        []Commit  `json:"commits"`
	CommitsOmitted int       `json:"commitsOmitted,omitempty"`

	// DiffBase is the commit the diffstat is taken from: the last commit
	// before Since, or HEAD.
	DiffBase     string     `json:"diffBase,omitempty"`
	Diff         []DiffFile `json:"diff"`
	DiffOmitted  int        `json:"diffOmitted,omitempty"`
	FilesChanged int        `json:"filesChanged"`
	Insertions   int        `json:"insertions"`
	Deletions    int        `json:"deletions"`
}

// Facts are the mechanical facts of a workspace at handoff time.
type Facts struct {
	Git           Git     `json:"git"`
	Checks        []Check `json:"checks"`
	ChecksOmitted int     `json:"checksOmitted,omitempty"`
	// Notes are short honest lines about what could not be gathered ("not
	// a git repository", "git is not installed", "HEAD is detached").
	Notes []string `json:"notes"`
}

// Gather collects the facts of the workspace rooted at dir. since is when
// the source session started (zero when unknown: then no commits are
// listed and the diffstat is that of the uncommitted changes). It never
// fails: what cannot be gathered is left out and said in Facts.Notes. It
// returns early, with a note, when ctx ends.
func Gather(ctx context.Context, dir string, since time.Time, opts Options) Facts {
	o := opts.withDefaults()
	var f Facts
	f.Checks, f.ChecksOmitted = lastChecks(o.Checks, o.MaxChecks)
	g := &gatherer{ctx: ctx, dir: dir, o: o, f: &f}
	g.git(since)
	nonNil(&f.Notes)
	nonNil(&f.Git.Uncommitted)
	nonNil(&f.Git.Commits)
	nonNil(&f.Git.Diff)
	return f
}

// nonNil makes a nil list empty, so that its JSON is [] rather than null.
func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}

// lastChecks keeps the newest max checks, each clipped.
func lastChecks(cs []Check, maxN int) ([]Check, int) {
	omitted := max(0, len(cs)-maxN)
	cs = cs[omitted:]
	out := make([]Check, len(cs))
	for i, c := range cs {
		out[i] = Check{Command: clip(c.Command, maxCheckChars), ExitCode: c.ExitCode, Summary: clip(c.Summary, maxCheckChars)}
	}
	return out, omitted
}

func (f *Facts) note(s string) { f.Notes = append(f.Notes, s) }

// Func returns a gatherer for handoff.Briefing.Facts: the facts of the
// workspace's root since the source session started (or, without a
// source, since the transfer was created), rendered as Markdown. A
// workspace without a root gives no facts.
func Func(opts Options) func(ctx context.Context, root string, since time.Time) string {
	return func(ctx context.Context, root string, since time.Time) string {
		if root == "" {
			return ""
		}
		return Gather(ctx, root, since, opts).Markdown()
	}
}
