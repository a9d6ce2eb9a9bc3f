package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/batonhq/baton"
)

// DefaultMaxLineBytes is the longest line a host or a Client reads unless
// told otherwise.
const DefaultMaxLineBytes = 1 << 20

// LineReader reads JSON Lines: one line at a time, without its newline,
// refusing lines over a limit. It is not safe for concurrent use.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader reads lines from r; a line longer than max bytes (max <= 0
// means DefaultMaxLineBytes) is refused.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-empty line, valid until the following call. It
// returns io.EOF at the end of the stream (a last line without a newline is
// still returned first), ErrLineTooLong for a line over the limit (the
// stream is then unusable), or the reader's error.
func (l *LineReader) Next() ([]byte, error) {
	for {
		l.buf = l.buf[:0]
		for {
			chunk, err := l.r.ReadSlice('\n')
			if len(l.buf)+len(chunk) > l.max+1 {
				return nil, baton.Errorf(ErrLineTooLong, "over %d bytes", l.max)
			}
			l.buf = append(l.buf, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) && len(bytes.TrimSpace(l.buf)) > 0 {
				break
			}
			return nil, err
		}
		line := bytes.TrimSpace(l.buf)
		if len(line) > 0 {
			return line, nil
		}
	}
}

// MarshalLine encodes v as one JSON line, newline included. HTML characters
// are not escaped, and encoding/json escapes every newline inside strings,
// so the result is exactly one line. It returns encoding/json's error for a
// value it cannot encode.
func MarshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mustLine encodes a record this package built itself; its types always
// encode, so a failure is a bug.
func mustLine(v any) []byte {
	b, err := MarshalLine(v)
	if err != nil {
		panic("host: encode record: " + err.Error())
	}
	return b
}
