package remote

import (
	"bytes"
	"testing"
)

func TestNoiseFilter(t *testing.T) {
	in := "remote: git-secure: rejected: x\nerror: failed to push some refs to 'file:///srv'\nprogress 50%\rprogress 100%\r\nlast"
	tests := []struct {
		name    string
		hold    bool
		finish  func(*noiseFilter)
		want    string
		wantNow string // what is written before finish
	}{
		{"stream", false, (*noiseFilter).Flush,
			"remote: git-secure: rejected: x\nprogress 50%\rprogress 100%\r\nlast",
			"remote: git-secure: rejected: x\nprogress 50%\rprogress 100%\r\n"},
		{"hold then release", true, (*noiseFilter).Release,
			"progress 50%\rprogress 100%\rremote: git-secure: rejected: x\n\nlast",
			"progress 50%\rprogress 100%\r"},
		{"hold then discard", true, (*noiseFilter).Discard,
			"progress 50%\rprogress 100%\r", "progress 50%\rprogress 100%\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newNoiseFilter(&out)
			f.hold = tt.hold
			// Byte by byte: lines split across writes are put together.
			for i := range len(in) {
				f.Write([]byte{in[i]})
			}
			if got := out.String(); got != tt.wantNow {
				t.Errorf("before the outcome: %q, want %q", got, tt.wantNow)
			}
			tt.finish(f)
			if got := out.String(); got != tt.want {
				t.Errorf("after: %q, want %q", got, tt.want)
			}
		})
	}
}
