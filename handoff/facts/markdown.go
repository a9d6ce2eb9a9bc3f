package facts

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Markdown renders the facts as a Markdown fragment without a heading of
// its own (the caller puts it under one): the git state, the uncommitted
// files, the commits since the session started, the diffstat, the checks,
// then the notes. Paths and commit subjects are recorded text: they are
// written inside code spans, flattened to one line. The rendering is
// bounded by the Options the facts were gathered with, and deterministic.
func (f Facts) Markdown() string {
	var b strings.Builder
	g := f.Git
	if g.Repository {
		if g.Detached {
			b.WriteString("Git: detached HEAD")
		} else {
			b.WriteString("Git: branch " + code(g.Branch))
		}
		if g.Head != "" {
			b.WriteString(" at " + code(short(g.Head)))
		} else {
			b.WriteString(", no commits yet")
		}
		if g.Upstream != "" {
			fmt.Fprintf(&b, ", upstream %s: %d ahead, %d behind", code(g.Upstream), g.Ahead, g.Behind)
		}
		b.WriteString(".\n")

		if len(g.Uncommitted) == 0 && g.UncommittedOmitted == 0 {
			b.WriteString("\nNo uncommitted changes.\n")
		} else {
			fmt.Fprintf(&b, "\nUncommitted files (%d):\n", len(g.Uncommitted)+g.UncommittedOmitted)
			for _, u := range g.Uncommitted {
				b.WriteString("- " + code(u.Status) + " " + code(u.Path))
				if u.From != "" {
					b.WriteString(" (from " + code(u.From) + ")")
				}
				b.WriteString("\n")
			}
			more(&b, g.UncommittedOmitted, "file")
		}

		if !g.Since.IsZero() {
			n := len(g.Commits) + g.CommitsOmitted
			if n == 0 {
				fmt.Fprintf(&b, "\nNo commits since the session started (%s).\n", g.Since.Format(time.RFC3339))
			} else {
				fmt.Fprintf(&b, "\nCommits since the session started (%s), newest first (%d):\n", g.Since.Format(time.RFC3339), n)
				for _, c := range g.Commits {
					b.WriteString("- " + code(short(c.Hash)) + " " + code(c.Subject) + " (" + code(c.Author) + ", " + c.When.Format(time.RFC3339) + ")\n")
				}
				more(&b, g.CommitsOmitted, "commit")
			}
		}

		if g.DiffBase != "" {
			fmt.Fprintf(&b, "\nDiffstat from %s to the working tree: %d %s changed, %d insertions(+), %d deletions(-).\n",
				code(short(g.DiffBase)), g.FilesChanged, plural(g.FilesChanged, "file"), g.Insertions, g.Deletions)
			for _, d := range g.Diff {
				if d.Binary {
					b.WriteString("- " + code(d.Path) + " (binary)\n")
					continue
				}
				fmt.Fprintf(&b, "- %s +%d -%d\n", code(d.Path), d.Added, d.Deleted)
			}
			more(&b, g.DiffOmitted, "file")
		}
	}
	if n := len(f.Checks) + f.ChecksOmitted; n > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Checks the previous session ran, oldest first (%d):\n", n)
		if f.ChecksOmitted > 0 {
			fmt.Fprintf(&b, "- ...%d earlier %s omitted...\n", f.ChecksOmitted, plural(f.ChecksOmitted, "check"))
		}
		for _, c := range f.Checks {
			b.WriteString("- " + code(c.Command) + ": exit " + strconv.Itoa(c.ExitCode))
			if c.Summary != "" {
				b.WriteString(", " + code(c.Summary))
			}
			b.WriteString("\n")
		}
	}
	if len(f.Notes) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		for _, n := range f.Notes {
			b.WriteString("Note: " + n + "\n")
		}
	}
	return b.String()
}

func more(b *strings.Builder, n int, noun string) {
	if n > 0 {
		fmt.Fprintf(b, "- ...and %d more %s\n", n, plural(n, noun))
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// oneLine turns line breaks and tabs into spaces.
var oneLine = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ")

// code renders s as a one-line Markdown code span, whatever backticks or
// line breaks it holds.
func code(s string) string {
	s = oneLine.Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
