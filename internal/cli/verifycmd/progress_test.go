package verifycmd

import (
	"bytes"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := &progress{w: &out, tty: true, start: clock, now: func() time.Time { return clock }}

	p.update(10, 1000) // within the first second: nothing
	if out.Len() != 0 {
		t.Fatalf("wrote %q before the delay", out.String())
	}
	clock = clock.Add(progressDelay)
	p.update(100, 1000)
	if got, want := out.String(), "\rverifying entries 100/1000 (10%)"; got != want {
		t.Fatalf("first line %q, want %q", got, want)
	}
	out.Reset()
	clock = clock.Add(progressInterval / 2)
	p.update(150, 1000) // throttled
	if out.Len() != 0 {
		t.Fatalf("wrote %q within the interval", out.String())
	}
	clock = clock.Add(progressInterval)
	p.update(999, 1000)
	if got, want := out.String(), "\rverifying entries 999/1000 (99%)"; got != want {
		t.Fatalf("second line %q, want %q", got, want)
	}
	out.Reset()
	p.finish()
	if got, want := out.String(), "\r"+string(bytes.Repeat([]byte{' '}, len("verifying entries 999/1000 (99%)")))+"\r"; got != want {
		t.Fatalf("finish wrote %q, want %q", got, want)
	}

	// Not a terminal, or work done before the delay: nothing at all.
	out.Reset()
	quiet := &progress{w: &out, tty: false, start: clock, now: func() time.Time { return clock.Add(time.Hour) }}
	quiet.update(1, 2)
	quiet.finish()
	fast := &progress{w: &out, tty: true, start: clock, now: func() time.Time { return clock.Add(time.Hour) }}
	fast.update(2, 2)
	fast.finish()
	if out.Len() != 0 {
		t.Fatalf("wrote %q", out.String())
	}
}
