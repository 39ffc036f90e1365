// Package trace prints where a short-lived git-secure process spends its
// time (GIT_SECURE_TRACE=1): hooks and the remote helper run on every push,
// and a phase that costs a few milliseconds there is worth seeing.
package trace

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Tracer prints the time since its start at each mark. A nil *Tracer is
// valid and prints nothing, so callers need no checks.
type Tracer struct {
	mu    sync.Mutex
	w     io.Writer
	name  string
	start time.Time
	last  time.Time
}

// New returns a tracer writing to w, or nil (tracing off) when w is nil.
func New(w io.Writer, name string, start time.Time) *Tracer {
	if w == nil {
		return nil
	}
	return &Tracer{w: w, name: name, start: start, last: start}
}

// Mark prints the phase that just ended: its own time and the total.
func (t *Tracer) Mark(phase string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	fmt.Fprintf(t.w, "git-secure: trace: %s %-24s %6.1f ms (at %6.1f ms)\n", t.name, phase,
		float64(now.Sub(t.last).Microseconds())/1000, float64(now.Sub(t.start).Microseconds())/1000)
	t.last = now
}
