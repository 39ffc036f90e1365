package remote

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadPushSpecs: git's batch of push lines becomes one pushSpec per
// line, whose RefChange names the destination; a line the helper cannot
// read ends the push, naming the line.
func TestReadPushSpecs(t *testing.T) {
	for _, c := range []struct {
		name, input string
		want        []pushSpec // Ref, src, force, raw
		wantErr     string
	}{
		{"one branch", "push refs/heads/main:refs/heads/main\n\n",
			[]pushSpec{{src: "refs/heads/main", raw: "refs/heads/main:refs/heads/main"}}, ""},
		{"forced and deleted", "push +refs/heads/a:refs/heads/b\npush :refs/tags/v1\n\n",
			[]pushSpec{{src: "refs/heads/a", force: true, raw: "+refs/heads/a:refs/heads/b"}, {raw: ":refs/tags/v1"}}, ""},
		{"no colon", "push refs/heads/main\n\n", nil, `bad push command "push refs/heads/main"`},
		{"bad destination", "push refs/heads/main:refs/heads/a..b\n\n", nil, "bad push command"},
		{"option-like source", "push --exec=x:refs/heads/main\n\n", nil, "bad push command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := bufio.NewReader(strings.NewReader(c.input))
			first, err := readLine(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readPushSpecs(in, first)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v; want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("got %+v, %v; want %d specs", got, err, len(c.want))
			}
			for i, s := range got {
				w := c.want[i]
				wantRef := w.raw[strings.Index(w.raw, ":")+1:]
				if s.Ref != wantRef || s.src != w.src || s.force != w.force || s.raw != w.raw || !s.New.IsZero() {
					t.Errorf("spec %d = %+v; want ref %s, src %q, force %v, raw %q, New zero", i, s, wantRef, w.src, w.force, w.raw)
				}
			}
		})
	}
}

// TestRefusalsUnwrapRemoteRejected: git push --porcelain reports a hook's
// refusal as "[remote rejected] (pre-receive hook declined)"; handed to
// git as is, git printed "! [remote rejected] main -> main ([remote
// rejected] (pre-receive hook declined))".
func TestRefusalsUnwrapRemoteRejected(t *testing.T) {
	out := "To /srv/x.git\n" +
		"!\trefs/heads/main:refs/heads/main\t[remote rejected] (pre-receive hook declined)\n" +
		"!\trefs/heads/dev:refs/heads/dev\t[rejected] (fetch first)\n" +
		"!\trefs/heads/odd:refs/heads/odd\t[remote rejected] (a (nested) reason)\n" +
		"Done\n"
	got := refusals([]byte(out))
	want := map[string]string{
		"refs/heads/main": "pre-receive hook declined",
		"refs/heads/dev":  "[rejected] (fetch first)",
		"refs/heads/odd":  "a (nested) reason",
	}
	for ref, w := range want {
		if got[ref] != w {
			t.Errorf("refusals()[%s] = %q, want %q", ref, got[ref], w)
		}
	}
}
