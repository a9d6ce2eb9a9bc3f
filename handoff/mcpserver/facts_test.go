package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// gitRepo makes dir a git repository with one commit dated when whose
// subject holds a token, and an untracked file.
func gitRepo(t *testing.T, dir string, when time.Time) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		d := when.Format(time.RFC3339)
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada",
			"GIT_COMMITTER_EMAIL=ada@example.com", "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "use "+ghToken+" for the deploy")
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFactsToolInBothScopes(t *testing.T) {
	root := t.TempDir()
	gitRepo(t, root, time.Now().Add(time.Hour)) // after the source session started
	f := newFixture(t, fixtureOpts{root: root, limits: historyLimits()})
	_, _, report := f.reportTurn(t, f.ws, f.src.ID)
	target := f.srv.GrantTarget(f.ws, "hof-9")
	for _, kind := range []string{"memory", "http", "stdio"} {
		for _, acc := range []mcpserver.Access{report, target} {
			t.Run(kind+"/"+string(acc.Scope), func(t *testing.T) {
				if acc.Scope == mcpserver.ScopeTarget {
					// The default gatherer needs the handoff; hof-9 is not one.
					refusal(t, call(t, f.connect(t, kind, acc), mcpserver.ToolFacts, nil), baton.ErrNotFound.Code)
					return
				}
				res := call(t, f.connect(t, kind, acc), mcpserver.ToolFacts, map[string]any{})
				if res.IsError {
					t.Fatalf("facts refused: %s", resultText(res))
				}
				md := resultText(res)
				var got facts.Facts
				structured(t, res, &got)
				if !got.Git.Repository || got.Git.Branch != "main" || len(got.Git.Commits) != 1 || len(got.Git.Uncommitted) != 1 {
					t.Fatalf("facts %+v", got)
				}
				for _, s := range []string{"branch `main`", "`??` `notes.md`", "use [REDACTED] for the deploy"} {
					if !strings.Contains(md, s) {
						t.Errorf("facts text lacks %q:\n%s", s, md)
					}
				}
				if strings.Contains(md, ghToken) || got.Git.Commits[0].Subject != "use [REDACTED] for the deploy" {
					t.Errorf("a token leaked: %q / %q", md, got.Git.Commits[0].Subject)
				}
			})
		}
	}
	// Arguments are refused when they are not the empty object.
	refusal(t, call(t, f.connect(t, "memory", report), mcpserver.ToolFacts, map[string]any{"verbose": true}), baton.ErrInvalid.Code)
}

func TestFactsToolWithTheHostsGatherer(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	srv, err := mcpserver.New(mcpserver.Config{Coordinator: f.co, Facts: func(_ context.Context, ws baton.WorkspaceID, id baton.HandoffID) (facts.Facts, error) {
		return facts.Facts{Notes: []string{"gathered by the host for " + string(id)}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	acc := srv.GrantTarget(f.ws, "hof-3")
	res := call(t, f.connect(t, "memory", acc), mcpserver.ToolFacts, nil)
	if res.IsError || !strings.Contains(resultText(res), "Note: gathered by the host for hof-3") {
		t.Fatalf("facts: %s", resultText(res))
	}
}
