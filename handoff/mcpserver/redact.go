package mcpserver

import (
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/recap"
)

// redactFacts returns f with every recorded text (paths, subjects, names,
// commands, notes) redacted as the briefing redacts it, so that neither the
// Markdown nor the structured facts carry a secret the briefing would not.
func redactFacts(f facts.Facts, red *recap.Redactor) facts.Facts {
	r := func(s *string) {
		if *s != "" {
			*s = string(red.Clean(nil, *s))
		}
	}
	g := &f.Git
	for _, p := range []*string{&g.Branch, &g.Upstream} {
		r(p)
	}
	g.Uncommitted = append([]facts.File(nil), g.Uncommitted...)
	for i := range g.Uncommitted {
		r(&g.Uncommitted[i].Path)
		r(&g.Uncommitted[i].From)
	}
	g.Commits = append([]facts.Commit(nil), g.Commits...)
	for i := range g.Commits {
		r(&g.Commits[i].Subject)
		r(&g.Commits[i].Author)
	}
	g.Diff = append([]facts.DiffFile(nil), g.Diff...)
	for i := range g.Diff {
		r(&g.Diff[i].Path)
	}
	f.Checks = append([]facts.Check(nil), f.Checks...)
	for i := range f.Checks {
		r(&f.Checks[i].Command)
		r(&f.Checks[i].Summary)
	}
	f.Notes = append([]string(nil), f.Notes...)
	for i := range f.Notes {
		r(&f.Notes[i])
	}
	return f
}
