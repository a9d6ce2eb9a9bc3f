package handofftest

import (
	"fmt"

	"github.com/batonhq/baton"
	"strings"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// traceLines is how many of the latest lines a trace keeps.
const traceLines = 300

// trace keeps the latest lines the nodes' Coordinators logged and the
// steps the harness took, interleaved, so that a failure the scheduler
// made (rapid cannot always replay those) comes with what led to it.
type trace struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func (r *trace) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < traceLines {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % traceLines
	r.full = true
}

// Write takes one encoded log entry (zapcore writes each entry at once).
func (r *trace) Write(p []byte) (int, error) {
	r.add(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (r *trace) Sync() error { return nil }

// String returns the kept lines, oldest first.
func (r *trace) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.lines[r.next:]...)
	out = append(out, r.lines[:r.next]...)
	head := ""
	if r.full {
		head = "(earlier lines dropped)\n"
	}
	return head + strings.Join(out, "\n")
}

// logger returns a logger that writes to the trace, naming the node and
// its life.
func (r *trace) logger(node string, life int) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey, enc.CallerKey, enc.StacktraceKey = "", "", ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), r, zapcore.DebugLevel)
	return zap.New(core).With(zap.String("node", node), zap.Int("life", life))
}

// took counts a reservation take of ws in the model, and traces it.
func (h *harness) took(ws baton.WorkspaceID, what string) {
	h.epoch[ws]++
	h.log.add(fmt.Sprintf("   model: %s's reservation taken (%s), epoch %d", ws, what, h.epoch[ws]))
}
