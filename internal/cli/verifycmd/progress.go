package verifycmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/git-secure/git-secure/internal/cli/factory"
)

// progress shows "verifying entries done/total (pct%)" on one terminal line
// once work has taken longer than a second, at most ten times a second, and
// clears the line when done. It shows nothing when stderr is not a terminal.
//
// It is written here rather than taken from a progress-bar library: every
// package linked into the binary runs its initialisation at every start,
// and the binary starts on every push and in every server hook.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	now   func() time.Time
	last  time.Time // last line written; zero before the first
	width int       // length of the last line written, to clear it
}

func newProgress(f *factory.Factory, enabled bool) *progress {
	return &progress{w: f.Stderr, start: time.Now(), now: time.Now, tty: enabled && f.StderrTerminal()}
}

const (
	progressDelay    = time.Second
	progressInterval = 100 * time.Millisecond
)

// update is a verify.Options.Progress callback (safe for concurrent use).
func (p *progress) update(done, total int) {
	if !p.tty || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if now.Sub(p.start) < progressDelay || (p.last.IsZero() && done >= total) || now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	line := fmt.Sprintf("verifying entries %d/%d (%d%%)", done, total, done*100/total)
	pad := p.width - len(line)
	p.width = len(line)
	if pad < 0 {
		pad = 0
	}
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
}

// finish clears the progress line, if one was written.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%*s\r", p.width, "")
		p.width = 0
	}
}
