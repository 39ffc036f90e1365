package cli

import (
	"os"
	"path/filepath"
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
