package exec

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batonhq/baton/engine"
)

// A UsageMeter reads the context usage of one launch (engine.Usage, which
// the process reports in engine.ExitStatus.Usage). Output.Usage makes one
// per launch; the engine calls Line with each line of standard output, in
// order and from one goroutine, then Usage once, after the child exited
// and its output was read.
type UsageMeter interface {
	// Line reads one line of standard output (without its line end).
	Line(line []byte)
	// Usage returns the launch's usage: env is the child's environment,
	// nativeID its native session id ("" when none was seen). A Window of
	// 0 is then looked up in Profile.Windows.
	Usage(env []string, nativeID string) engine.Usage
}

// setUsage sets Usage once the launch's output was read (called with the
// readers done): the meter's, its window from the profile's table when the
// meter names none. Without a meter Usage stays zero.
func (p *process) setUsage() {
	if p.meter == nil {
		return
	}
	p.Mu.Lock()
	id := p.NativeID
	p.Mu.Unlock()
	u := p.meter.Usage(p.l.env, id)
	if u.Tokens > 0 && u.Window == 0 {
		u.Window = p.e.opts.Profile.Windows[p.req.Config.Normalize().Model]
	}
	p.Mu.Lock()
	p.Usage = u
	p.Mu.Unlock()
}

// claudeMeter reads Claude Code's stream-json: the usage of the last
// assistant message of the main conversation (a subagent's, which names a
// parent_tool_use_id, has a context of its own), and the window the
// result line's modelUsage gives that message's model.
type claudeMeter struct {
	u     engine.Usage
	model string
}

func (m *claudeMeter) Line(line []byte) {
	if !bytes.Contains(line, []byte(`"usage"`)) && !bytes.Contains(line, []byte(`"modelUsage"`)) {
		return
	}
	var l struct {
		Type    string          `json:"type"`
		Parent  json.RawMessage `json:"parent_tool_use_id"`
		Message struct {
			Model string `json:"model"`
			Usage *struct {
				Input         int64 `json:"input_tokens"`
				CacheCreation int64 `json:"cache_creation_input_tokens"`
				CacheRead     int64 `json:"cache_read_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
		ModelUsage map[string]struct {
			ContextWindow int64 `json:"contextWindow"`
		} `json:"modelUsage"`
	}
	if json.Unmarshal(line, &l) != nil {
		return
	}
	switch l.Type {
	case "assistant":
		if u := l.Message.Usage; u != nil && (len(l.Parent) == 0 || string(l.Parent) == "null") {
			// One message may come as several lines (a line per content
			// block), each with the usage of its request: the last one
			// wins, as the last request does.
			m.u.Tokens = u.Input + u.CacheCreation + u.CacheRead
			m.model = l.Message.Model
		}
	case "result":
		// result.usage sums the turn's requests: not the context. Its
		// modelUsage names each model's window.
		if mu, ok := l.ModelUsage[m.model]; ok && mu.ContextWindow > 0 {
			m.u.Window = mu.ContextWindow
		} else if len(l.ModelUsage) == 1 {
			for _, mu := range l.ModelUsage {
				m.u.Window = mu.ContextWindow
			}
		}
	}
}

func (m *claudeMeter) Usage([]string, string) engine.Usage { return m.u }

// codexMeter reads Codex's session file: codex exec --json's
// turn.completed usage sums the turn's requests (and so is not the
// context), while the rollout file Codex keeps of the thread
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-THREAD.jsonl) records a
// token_count event after each request, with that request's usage
// (info.last_token_usage) and the model's window
// (info.model_context_window). The last event wins.
type codexMeter struct{}

func (codexMeter) Line([]byte) {}

func (codexMeter) Usage(env []string, thread string) engine.Usage {
	if thread == "" || strings.ContainsAny(thread, `/\*?[`) {
		return engine.Usage{}
	}
	home := envValue(env, "CODEX_HOME")
	if h := envValue(env, "HOME"); home == "" && h != "" {
		home = filepath.Join(h, ".codex")
	}
	if home == "" {
		return engine.Usage{}
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	var u engine.Usage
	var newest int64
	for _, f := range files {
		// A resume may write a file of its own: the newest file's last
		// event is the last request's.
		fi, err := os.Stat(f)
		if err != nil || fi.ModTime().UnixNano() < newest {
			continue
		}
		if v, ok := lastTokenCount(f, fi.Size()); ok {
			u, newest = v, fi.ModTime().UnixNano()
		}
	}
	return u
}

// rolloutTail bounds how much of the end of a rollout file is read for its
// last token_count event (one event is about a kilobyte; a tool's output
// can be long).
const rolloutTail = 4 << 20

// lastTokenCount returns the usage of the last token_count event of a
// Codex rollout file of size bytes, among its last rolloutTail bytes.
func lastTokenCount(path string, size int64) (engine.Usage, bool) {
	f, err := os.Open(path)
	if err != nil {
		return engine.Usage{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, max(size-rolloutTail, 0), rolloutTail))
	if err != nil {
		return engine.Usage{}, false
	}
	for _, line := range slices.Backward(bytes.Split(b, []byte{'\n'})) {
		if u, ok := codexTokenCount(line); ok {
			return u, true
		}
	}
	return engine.Usage{}, false
}

// codexTokenCount reads one rollout line: a token_count event with the
// last request's usage.
func codexTokenCount(line []byte) (engine.Usage, bool) {
	if !bytes.Contains(line, []byte(`"token_count"`)) {
		return engine.Usage{}, false
	}
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
			Info *struct {
				Last *struct {
					Input int64 `json:"input_tokens"`
				} `json:"last_token_usage"`
				Window int64 `json:"model_context_window"`
			} `json:"info"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" ||
		l.Payload.Info == nil || l.Payload.Info.Last == nil {
		return engine.Usage{}, false
	}
	// input_tokens counts the cached input too (cached_input_tokens is
	// the part of it read from the cache).
	return engine.Usage{Tokens: l.Payload.Info.Last.Input, Window: l.Payload.Info.Window}, true
}

// envValue returns the value of key in env, the last entry winning as
// os/exec does; "" when absent.
func envValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}
