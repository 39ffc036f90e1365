package verify

import (
	"math"
	"runtime/debug"
)

// A long log's verification keeps 25-30 MB live at a million entries (the
// attestation store's index of 100 000 approval directories, the used
// approval digests, the policy, the windows in flight), and the garbage
// collector let the heap grow to twice that before collecting: with the
// runtime and the binary's pages, 73 MiB resident, over the 64 MiB that
// issue 18 asks at any size. While a log of inProcessChainMin entries or
// more streams, and through the checkpoint's save, the runtime's soft
// limit is longLogMemory (unless GOMEMLIMIT, or a caller, set one): the
// collector runs more often near it, at most half the CPU (the runtime's
// own cap), and only past it. Logs below inProcessChainMin never come
// near it.
const longLogMemory = 40 << 20

// memoryLimit sets and restores the soft limit for one verification. The
// limit is the process's: two verifications streaming long logs at once
// in one process share it.
type memoryLimit struct {
	old int64
	set bool
}

// apply sets longLogMemory when no limit is set (a nil m does nothing).
func (m *memoryLimit) apply() {
	if m == nil || m.set {
		return
	}
	if cur := debug.SetMemoryLimit(-1); cur != math.MaxInt64 {
		return // GOMEMLIMIT or a caller's: theirs
	}
	m.old = debug.SetMemoryLimit(longLogMemory)
	m.set = true
}

// restore puts back the limit apply replaced.
func (m *memoryLimit) restore() {
	if m != nil && m.set {
		debug.SetMemoryLimit(m.old)
		m.set = false
	}
}
