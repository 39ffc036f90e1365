package remote

import (
	"bytes"
	"io"
	"strings"
)

// noiseFilter passes the stderr of the helper's inner git push on to the
// user, less "failed to push some refs": the user's git says it once for
// the whole push, from the helper's report. Everything else, a server's
// refusal included, goes through; progress lines ending in '\r' are not
// held back.
//
// With hold set, whole lines are kept until Release (the attempt's outcome
// is final: show them) or Discard (the attempt lost a race and is retried:
// its refusal is no news to the user).
type noiseFilter struct {
	w    io.Writer
	buf  []byte
	hold bool
	held []byte
}

func newNoiseFilter(w io.Writer) *noiseFilter { return &noiseFilter{w: w} }

func (f *noiseFilter) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexAny(f.buf, "\r\n")
		if i < 0 {
			break
		}
		line := f.buf[:i+1]
		switch {
		case isPushNoise(string(line)):
		case f.hold && line[len(line)-1] == '\n':
			f.held = append(f.held, line...)
		default:
			if _, err := f.w.Write(line); err != nil {
				return len(p), err
			}
		}
		f.buf = f.buf[i+1:]
	}
	return len(p), nil
}

// Flush writes (or holds) a last line that had no newline.
func (f *noiseFilter) Flush() {
	if len(f.buf) > 0 && !isPushNoise(string(f.buf)) {
		if f.hold {
			f.held = append(f.held, f.buf...)
		} else {
			_, _ = f.w.Write(f.buf)
		}
	}
	f.buf = nil
}

// Release writes the held lines; nil-safe.
func (f *noiseFilter) Release() {
	if f == nil {
		return
	}
	f.Flush()
	_, _ = f.w.Write(f.held)
	f.held = nil
}

// Discard drops the held lines; nil-safe.
func (f *noiseFilter) Discard() {
	if f != nil {
		f.buf, f.held = nil, nil
	}
}

// isPushNoise tells the lines noiseFilter drops.
func isPushNoise(line string) bool {
	line = strings.TrimSpace(line)
	line = strings.TrimSpace(strings.TrimPrefix(line, "remote:"))
	return strings.HasPrefix(line, "error: failed to push some refs to")
}
