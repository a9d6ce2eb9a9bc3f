//go:build linux

package clitest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBin(t *testing.T) {
	t.Setenv("BATON_CLITEST_BIN", "/opt/tool")
	if got := Bin(t, "BATON_CLITEST_BIN", "baton-no-such-cli", "n/a"); got != "/opt/tool" {
		t.Errorf("Bin with the variable set = %q; want /opt/tool", got)
	}

	t.Setenv("BATON_CLITEST_BIN", "")
	t.Setenv("CI", "")
	returned := false
	ran := t.Run("missing", func(t *testing.T) {
		Bin(t, "BATON_CLITEST_BIN", "baton-no-such-cli", "n/a")
		returned = true
	})
	if !ran || returned {
		t.Errorf("Bin of a missing CLI outside CI: returned %v; want the test skipped", returned)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("PATH", "/bin")
	got := ClaudeEnv("/h", "http://127.0.0.1:1")
	for _, want := range []string{"PATH=/bin", "HOME=/h", "ANTHROPIC_BASE_URL=http://127.0.0.1:1", "ANTHROPIC_API_KEY=sk-test"} {
		if !slices.Contains(got, want) {
			t.Errorf("ClaudeEnv = %q; lacks %q", got, want)
		}
	}
	if diff := cmp.Diff([]string{"PATH=/bin", "HOME=/h", "CODEX_HOME=/h", "OPENAI_API_KEY=sk-test"}, CodexEnv("/h")); diff != "" {
		t.Errorf("CodexEnv (-want +got):\n%s", diff)
	}
}

func TestDir(t *testing.T) {
	d := Dir(t, t.TempDir(), "a", "b")
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() || filepath.Base(d) != "b" {
		t.Errorf("Dir = %q (%v); want a directory a/b", d, err)
	}
}

func TestSSE(t *testing.T) {
	w := httptest.NewRecorder()
	event := SSE(w)
	MessageText(event, "hi")
	want := "event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n"
	if got := w.Body.String(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("the stream starts\n%s\nwant\n%s", got, want)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !w.Flushed {
		t.Error("the events were not flushed")
	}
}

func TestStallHold(t *testing.T) {
	s := NewStall(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
	done := make(chan struct{})
	go func() {
		s.Hold(r)
		close(done)
	}()
	select {
	case <-s.Held:
	case <-time.After(10 * time.Second):
		t.Fatal("Hold never signalled Held")
	}
	select {
	case <-done:
		t.Fatal("Hold returned while the client was still there")
	default:
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Hold did not return when the client went away")
	}
}
