package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/verify"
)

// TestRSLLogFromCheckpoint: rsl log resolves the signers of the entries
// after a checkpoint's policy entry from the checkpoint (the first screen
// does not wait for a walk to the log's first policy); the output must be
// exactly what the walk to the policy entries gives, for every -n, with
// entries before and after the checkpoint and a second policy change.
func TestRSLLogFromCheckpoint(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	h.Git("update-ref", "refs/heads/a", "HEAD")
	h.Want(0, "rsl", "record", "refs/heads/a", "--key", h.Priv("carol"))
	h.Want(0, "verify") // the checkpoint: entry 3, policy entry 2
	cp, err := verify.LoadCheckpoint(verify.CheckpointPath(filepath.Join(h.Dir, ".git")))
	if err != nil || cp == nil || cp.PolicyEntry >= cp.Entry {
		t.Fatalf("checkpoint %+v, %v: want one after its policy entry", cp, err)
	}
	h.S.Commit(h.Dir, "b.txt", "b\n", "b")
	h.Git("update-ref", "refs/heads/b", "HEAD")
	h.Want(0, "rsl", "record", "refs/heads/b", "--key", h.Priv("bob"))
	h.Want(0, "policy", "add-rule", "b", "--ref", "refs/heads/b", "--allow", "bob")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	h.Git("update-ref", "refs/heads/c", "HEAD")
	h.Want(0, "rsl", "record", "refs/heads/c", "--key", h.Priv("carol"))

	path := verify.CheckpointPath(filepath.Join(h.Dir, ".git"))
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"", "1", "3", "5"} {
		args := []string{"rsl", "log"}
		if n != "" {
			args = append(args, "-n", n)
		}
		if err := os.WriteFile(path, saved, 0o644); err != nil {
			t.Fatal(err)
		}
		with := h.Want(0, args...).Stdout
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		without := h.Want(0, args...).Stdout
		if with != without {
			t.Errorf("rsl log %s with the checkpoint:\n%s\nwithout:\n%s", n, with, without)
		}
		if !strings.Contains(without, "by ") || strings.Contains(without, "does not know") {
			t.Errorf("rsl log %s: every entry is signed by a known person:\n%s", n, without)
		}
	}
}

// TestVerifyAtFromIndex: verify --at answers for entries up to the
// checkpoint from the index kept beside it (and for newer ones from the
// log), the same as walking the log: an old state, a skipped one, a later
// one; a tampered index is refused, a missing one falls back to the walk.
func TestVerifyAtFromIndex(t *testing.T) {
	h := NewCLIHarness(t)
	depthCLISetup(h)
	c1, n1 := depthRecord(h, "main", "alice", "one.txt")
	c2, n2 := depthRecord(h, "main", "bob", "two.txt")
	h.Want(0, "rsl", "skip", strconv.FormatUint(n2, 10), "--reason", "by mistake", "--key", h.Priv("alice"))
	h.Git("reset", "-q", "--hard", c1)
	c3, n3 := depthRecord(h, "main", "alice", "three.txt")
	h.Want(0, "verify") // checkpoint and index up to here
	gitDir := filepath.Join(h.Dir, ".git")
	cp, err := verify.LoadCheckpoint(verify.CheckpointPath(gitDir))
	if err != nil || cp == nil || cp.Index == nil || cp.Index.Records == 0 {
		t.Fatalf("checkpoint %+v, %v: want one with an index", cp, err)
	}
	c4, n4 := depthRecord(h, "main", "bob", "four.txt") // after the checkpoint

	check := func(what string) {
		t.Helper()
		for _, c := range []struct {
			commit string
			entry  uint64
		}{{c1, n1}, {c3, n3}, {c4, n4}, {c2, 0}} {
			r := h.Run("verify", "main", "--at", c.commit)
			switch {
			case c.entry == 0 && (r.Code != 1 || !strings.Contains(r.Stderr, "was never a verified state")):
				t.Errorf("%s: verify --at of the skipped state:\n%s", what, r)
			case c.entry != 0 && (r.Code != 0 || !strings.Contains(r.Stdout, "entry #"+strconv.FormatUint(c.entry, 10)+"\n")):
				t.Errorf("%s: verify --at %s, want entry #%d:\n%s", what, c.commit, c.entry, r)
			}
		}
	}
	check("with the index")
	index := verify.IndexPath(gitDir)
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.Run("verify", "main", "--at", c1)
	if r.Code == 0 || !strings.Contains(r.Stderr, "does not match the checkpoint (tampered or damaged)") {
		t.Errorf("verify --at with a tampered index:\n%s", r)
	}
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	check("without the index")
}
