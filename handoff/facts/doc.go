// Package facts gathers, without a model, the mechanical facts a handoff
// report is checked against: the state of the workspace's git repository
// (branch, HEAD, upstream ahead/behind, uncommitted files, commits since the
// source session started, diffstat) and the commands and checks the source
// session ran, when the caller knows them.
//
// A summary written by a model drifts from what really happened; these
// facts do not. They are rendered as Markdown (Facts.Markdown) to sit beside
// the summary in a handoff prompt, and kept structured (Facts, with JSON
// tags) for tools that want the fields.
//
// # Basics
//
// Gather runs a handful of read-only git commands in the workspace root:
//
//	git status --porcelain=v2 --branch -uall -z   branch, HEAD, upstream, ahead/behind,
//	                                              uncommitted files
//	git rev-list --count --since=T HEAD           how many commits since the session started
//	git log -z -n MAX --since=T HEAD              the newest of them
//	git diff --numstat --no-renames -z BASE       the diffstat of the session: BASE is the
//	                                              last commit before T (HEAD without T)
//
// Every list is bounded (Options.MaxFiles, MaxCommits, MaxDiffFiles,
// MaxChecks) and says how many entries were left out; output is read as a
// stream, so a repository with a million untracked files costs a count, not
// a million strings. git runs with GIT_OPTIONAL_LOCKS=0 (status takes no
// index lock that could disturb an agent still writing), without a pager or
// a terminal prompt, each command bounded by Options.Timeout.
//
// Gather never fails. A directory that is not a git repository, a detached
// HEAD, a repository without commits, a missing upstream, a diff too large
// to read in time, a missing git binary: each becomes a short honest line in
// Facts.Notes (and the field it concerns stays empty), never an error that
// could fail a transfer.
//
// # Caveats
//
// The facts are those of the moment Gather runs. Commits are selected by
// committer date (git log --since), so a rebase during the session, or a
// clock that moved, can include or leave out a commit the session did or
// did not make. The diffstat covers tracked files only; untracked files are
// listed with the uncommitted files. Checks are only what the caller passes
// in Options.Checks: baton does not watch what an agent runs.
package facts
