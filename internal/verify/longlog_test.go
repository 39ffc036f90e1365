package verify_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// A long log (read by the chain stream: listed, then read oldest first)
// verifies the same whether the in-process readers list and read it
// (packed or loose) or git does (GIT_SECURE_NO_FASTPATH=1); a tip whose
// parent skips an entry fails either way, naming the gap.
func TestLongLogInProcessLikeGit(t *testing.T) {
	const n = 150
	for _, writer := range []string{benchrepo.WriterPack, benchrepo.WriterLoose} {
		t.Run(writer, func(t *testing.T) {
			info, err := benchrepo.Build(t.TempDir(), benchrepo.Options{Entries: n, Spare: -1, Writer: writer})
			if err != nil {
				t.Fatal(err)
			}
			open := func(t *testing.T, off bool) *gitrepo.Repo {
				env := benchrepo.Env()
				if off {
					env = append(env, gitrepo.EnvNoFastPath+"=1")
				}
				r, err := gitrepo.OpenWithEnv(info.GitDir(), env)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { r.Close() })
				return r
			}
			opts := verify.Options{Now: info.Now()}
			for _, off := range []bool{false, true} {
				res, err := verify.Verify(open(t, off), opts)
				if err != nil || res.Entries != n || res.Tip != info.RSL {
					t.Fatalf("readers off %v: %d entries up to %v, %v", off, res.Entries, res.Tip, err)
				}
			}
			// The tip re-parented onto entry n-2: entry n-1 is gone.
			r := open(t, true)
			tip, err := r.ReadCommit(info.RSL)
			if err != nil {
				t.Fatal(err)
			}
			mid, err := r.ReadCommit(tip.Parents[0])
			if err != nil {
				t.Fatal(err)
			}
			raw := bytes.Replace(tip.Raw, []byte("parent "+tip.Parents[0].String()), []byte("parent "+mid.Parents[0].String()), 1)
			cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
			cmd.Dir, cmd.Env, cmd.Stdin = info.GitDir(), benchrepo.Env(), bytes.NewReader(raw)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			cmd = exec.Command("git", "update-ref", rsl.Ref, strings.TrimSpace(string(out)))
			cmd.Dir, cmd.Env = info.GitDir(), benchrepo.Env()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, off := range []bool{false, true} {
				_, err := verify.Verify(open(t, off), opts)
				if err == nil || !strings.Contains(err.Error(), "number 148 where 149 was expected (entries removed or reordered)") {
					t.Fatalf("readers off %v: a log missing entry 149 gave %v", off, err)
				}
			}
		})
	}
}
