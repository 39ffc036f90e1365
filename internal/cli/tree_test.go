package cli

import (
	"strings"
	"testing"
)

// TestCLITreeBoundApprovals: an approval bound to the tree survives an
// amended commit message (same tree) where the rule allows it, and only
// there; it never counts for another tree.
func TestCLITreeBoundApprovals(t *testing.T) {
	setup := func(t *testing.T, treeRule bool) *CLIHarness {
		h := NewCLIHarness(t)
		h.Want(0, "init", "--key", h.Priv("alice"), "--no-hooks")
		for _, name := range []string{"alice", "bob"} {
			h.Want(0, "policy", "add-person", name, "--key", h.Pub(name))
		}
		args := []string{"policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2"}
		if treeRule {
			args = append(args, "--tree-approvals")
		}
		h.Want(0, args...)
		h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
		return h
	}
	// bob approves commit C1 by its tree; alice then amends C1's message
	// (C2, same tree) and records it.
	flow := func(h *CLIHarness) {
		h.S.Commit(h.Dir, "feature.txt", "feature\n", "feature, first message")
		h.Want(0, "attest", "approve", "main", "--to", "HEAD", "--tree", "--key", h.Priv("bob"))
		h.Git("commit", "-q", "--amend", "-m", "feature, amended message")
		h.Want(0, "rsl", "record", "main", "--key", h.Priv("alice"))
	}

	t.Run("counts where the rule allows it", func(t *testing.T) {
		h := setup(t, true)
		flow(h)
		h.Want(0, "verify")
		if r := h.Want(0, "policy", "list"); !strings.Contains(r.Stdout, "tree-bound approvals count") {
			t.Fatalf("policy list does not show the rule's tree approvals:\n%s", r)
		}
	})
	t.Run("does not count where the rule does not allow it", func(t *testing.T) {
		h := setup(t, false)
		flow(h)
		r := h.Want(1, "verify")
		if !strings.Contains(r.Stderr, "threshold not met") || !strings.Contains(r.Stderr, "rule main") {
			t.Fatalf("want a threshold failure on rule main:\n%s", r)
		}
	})
	t.Run("never counts for another tree", func(t *testing.T) {
		h := setup(t, true)
		h.S.Commit(h.Dir, "feature.txt", "feature\n", "feature")
		h.Want(0, "attest", "approve", "main", "--to", "HEAD", "--tree", "--key", h.Priv("bob"))
		h.S.Commit(h.Dir, "feature.txt", "changed after the approval\n", "sneaky change") // other tree
		h.Git("reset", "-q", "--soft", "HEAD~1")
		h.Git("commit", "-q", "--amend", "-m", "feature")
		h.Want(0, "rsl", "record", "main", "--key", h.Priv("alice"))
		r := h.Want(1, "verify")
		if !strings.Contains(r.Stderr, "threshold not met") {
			t.Fatalf("want a threshold failure:\n%s", r)
		}
	})
}
