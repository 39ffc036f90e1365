package cli

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows "entries done / total" on a terminal once work has taken
// longer than a second; it shows nothing when stderr is not a terminal.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	bar   *progressbar.ProgressBar
	tty   bool
}

func (a *app) newProgress(enabled bool) *progress {
	p := &progress{w: a.env.Stderr, start: time.Now()}
	if f, ok := a.env.Stderr.(*os.File); ok && enabled {
		p.tty = term.IsTerminal(int(f.Fd()))
	}
	return p
}

// update is a verify.Options.Progress callback (safe for concurrent use).
func (p *progress) update(done, total int) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		if time.Since(p.start) < time.Second || done >= total {
			return
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription("verifying entries"),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
