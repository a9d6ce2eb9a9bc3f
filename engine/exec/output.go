package exec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"

	"go.uber.org/zap"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// readLines calls fn for each line of f (without its line end).
func readLines(f *os.File, fn func([]byte)) {
	r := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull || long != nil {
			// A long line comes in pieces: keep maxLine bytes of it.
			long = append(long, line[:min(len(line), maxLine-len(long))]...)
			if err == bufio.ErrBufferFull {
				continue
			}
			line, long = long, nil
		}
		if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
			fn(line)
		}
		if err != nil {
			return
		}
	}
}

func (p *process) readStdout() {
	defer p.readers.Done()
	readLines(p.Stdout, p.handleLine)
}

func (p *process) readStderr() {
	defer p.readers.Done()
	out := &p.e.opts.Profile.Output
	readLines(p.Stderr, func(line []byte) {
		if p.w != nil {
			p.w.Append(p.Clock().Now(), p.req.LaunchID, p.req.Turn, transcript.Event{Kind: transcript.Note, Text: "stderr: " + string(line)})
		}
		p.Mu.Lock()
		defer p.Mu.Unlock()
		p.noteLocked(out, line)
		p.AddTailLocked(line, newline)
	})
}

var newline = []byte{'\n'}

func (p *process) noteLocked(out *Output, line []byte) {
	if out.SessionMissing != nil && out.SessionMissing.Match(line) {
		p.missing = true
	}
	if out.AuthFailed != nil && out.AuthFailed.Match(line) {
		p.auth = true
	}
}

// handleLine reads one line of standard output: native id, readiness,
// transcript, turn end.
func (p *process) handleLine(line []byte) {
	out := &p.e.opts.Profile.Output
	var obj map[string]any
	if out.JSON && line[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		if d.Decode(&obj) != nil {
			obj = nil
		}
	}
	unready := false
	p.Mu.Lock()
	p.noteLocked(out, line)
	for _, f := range [...]struct {
		rules []Rule
		v     *string
	}{{out.NativeID, &p.NativeID}, {out.Model, &p.Seen.Model}, {out.Version, &p.Seen.Version}} {
		if *f.v != "" {
			continue
		}
		if r, ok := matchAny(f.rules, line, obj); ok {
			*f.v = r.id(line, obj)
		}
	}
	if !p.ResolvedLocked() {
		if _, ok := matchAny(out.Reject, line, obj); ok {
			unready = p.FailReadyLocked(engine.ErrReadyRejected, "the first turn was refused: "+clip(line, 512))
		} else if r, ok := matchAny(out.Ready, line, obj); ok {
			id := p.NativeID
			if id == "" {
				id = r.id(line, obj)
			}
			if id == "" && p.req.Mode == engine.Resume {
				id = p.req.NativeID
			}
			if id == "" {
				unready = p.FailReadyLocked(engine.ErrReadyRejected, "ready without a native session id")
			} else {
				p.NativeID = id
				p.ResolveLocked(id)
			}
		}
	}
	p.Mu.Unlock()
	// Readiness first, the transcript right after: a confirmation should
	// not wait for a disk write.
	if p.w != nil {
		var evs []transcript.Event
		if out.Events != nil {
			evs = out.Events(line)
		} else {
			evs = []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.Message, Text: string(line)}}
		}
		p.w.Append(p.Clock().Now(), p.req.LaunchID, p.req.Turn, evs...)
	}
	if unready {
		p.stopUnready()
	}
	if _, ok := matchAny(out.TurnEnd, line, obj); ok && p.w != nil {
		if err := p.w.Sync(); err != nil {
			p.e.opts.Logger.Warn("exec: transcript sync", zap.String("launch", string(p.req.LaunchID)), zap.Error(err))
		}
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
