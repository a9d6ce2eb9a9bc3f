package hosttest

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer collects what several goroutines write (a process's output, a
// logger's sink) for a test to read while they still write. The zero
// value is ready to use; a *Buffer is a zapcore.WriteSyncer.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Sync does nothing: the bytes are already there.
func (b *Buffer) Sync() error { return nil }

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns everything written so far as lines, surrounding space
// trimmed: one empty line when nothing was written.
func (b *Buffer) Lines() []string {
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}
