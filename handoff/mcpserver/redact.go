package mcpserver

import (
	"github.com/batonhq/baton/handoff/facts"
)

// redactFacts returns f with every recorded text (paths, subjects, names,
// commands, notes) redacted as the briefing redacts it, so that neither the
// Markdown nor the structured facts carry a secret the briefing would not.
func redactFacts(f facts.Facts, clean cleaner) facts.Facts {
	r := func(s *string) {
		if *s != "" {
			*s = string(clean(nil, *s))
		}
	}
	g := &f.Git
	r(&g.Branch)
	r(&g.Upstream)
	g.Uncommitted = redactEach(g.Uncommitted, func(x *facts.File) { r(&x.Path); r(&x.From) })
	g.Commits = redactEach(g.Commits, func(x *facts.Commit) { r(&x.Subject); r(&x.Author) })
	g.Diff = redactEach(g.Diff, func(x *facts.DiffFile) { r(&x.Path) })
	f.Checks = redactEach(f.Checks, func(x *facts.Check) { r(&x.Command); r(&x.Summary) })
	f.Notes = redactEach(f.Notes, r)
	return f
}

// redactEach returns a copy of s (nil when s is empty) with r applied to
// every element: the caller's facts are not modified.
func redactEach[T any](s []T, r func(*T)) []T {
	s = append([]T(nil), s...)
	for i := range s {
		r(&s[i])
	}
	return s
}
