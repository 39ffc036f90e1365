package e2e

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/rsl"
)

// TestFreshCloneRefusesRollbackOverMissingState (finding 01): bob may move
// main but not change src/crypto/**. He force-moves main from alice's
// crypto fix back to the vulnerable commit plus an unrelated one of his,
// with an entry he signs himself, on a forge without git-secure's hook.
// A fresh clone of the forge lacks the fix (unreachable), so its diff
// starts at the vulnerable state, where src/crypto/aes.c does not change:
// before the fix verification accepted the rollback. Now the rule crypto
// applies as if every file it protects changed, because the missing state
// was recorded by alice, who meets it. The enforcing server refuses the
// same push (it has the fix).
func TestFreshCloneRefusesRollbackOverMissingState(t *testing.T) {
	t.Parallel()
	w := newCryptoWorld(t, false)
	b, dir := w.bob, w.bobDir
	plain := w.plainCopy(t)

	b.git(dir, "checkout", "-q", "-B", "rollback", w.vuln)
	y := b.commit(dir, "NOTES", "notes\n")
	log := forge(t, b, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, w.fix), New: hash(t, y)})

	if r := w.attackPush(w.url, y, log); r.code == 0 || !containsAll(r.stderr, "refs/heads/main, rule crypto", "needs 1 of alice", "signer bob is not allowed by this rule", "protected files changed: src/crypto/aes.c") {
		t.Fatalf("the enforcing server must refuse bob's rollback of src/crypto naming the rule:\n%s", r)
	}
	if r := w.attackPush(plain, y, log); r.code != 0 {
		t.Fatalf("the forge (no hook) must take the push:\n%s", r)
	}
	for _, noFast := range []bool{false, true} {
		auditor := newUser(t, "auditor")
		if noFast {
			auditor.sb.Extra = append(auditor.sb.Extra, "GIT_SECURE_NO_FASTPATH=1")
		}
		fresh := auditor.path("fresh.git")
		auditor.git(auditor.sb.Home, "clone", "-q", "--mirror", plain, fresh)
		if r := auditor.run(fresh, "git", "cat-file", "-e", w.fix); r.code == 0 {
			t.Fatalf("the fresh clone has alice's fix %s: the scenario needs it missing", w.fix)
		}
		r := auditor.run(fresh, "git", "secure", "verify", "--full")
		if r.code == 0 {
			t.Fatalf("NO_FASTPATH=%v: a fresh clone accepted bob's rollback of alice's crypto fix (rule crypto needs alice):\n%s", noFast, r)
		}
		if !containsAll(r.stderr, "refs/heads/main, rule crypto", "signer bob is not allowed by this rule",
			"missing from the repository: state "+w.fix[:12]+" of entry #", "(signed by alice, who with its approvals met this rule) of refs/heads/main",
			"every path the rule protects counts as changed") {
			t.Errorf("NO_FASTPATH=%v: the refusal must name the ref, the rule, the signer and the missing state:\n%s", noFast, r)
		}
	}
}

// TestForcePushKeepsOldStateForFreshClones: bob (allowed on main, not on
// src/crypto/**) force-pushes main, through git-secure, from alice's
// README change back to the fix plus a commit of his: src/crypto does not
// change. His push also creates refs/secure/keep/<alice's state>, so a
// fresh clone has that state, diffs exactly, and verifies; without it the
// clone must refuse (alice's missing state could have changed
// src/crypto). The server refuses a keep ref naming another commit and a
// move or deletion of one.
func TestForcePushKeepsOldStateForFreshClones(t *testing.T) {
	t.Parallel()
	w := newCryptoWorld(t, false)
	a, b, dir := w.alice, w.bob, w.bobDir
	x := a.commit(w.aliceDir, "README", "alice's words\n")
	a.git(w.aliceDir, "push", "-q", "origin", "main")

	b.git(dir, "fetch", "-q")
	b.git(dir, "checkout", "-q", "-B", "main", w.fix)
	b.commit(dir, "NOTES", "notes\n")
	if r := b.run(dir, "git", "push", "-f", "origin", "main"); r.code != 0 {
		t.Fatalf("bob's force-push over alice's README change was refused:\n%s", r)
	}
	keep := rsl.KeepRefPrefix + x
	if got := w.srv.admin.refs(w.repo)[keep]; got != x {
		t.Fatalf("the server has %s at %q, want %s (the state the force-push left behind)", keep, got, x)
	}

	auditor := newUser(t, "auditor")
	fresh := auditor.path("fresh.git")
	auditor.git(auditor.sb.Home, "clone", "-q", "--mirror", w.url, fresh)
	if r := auditor.run(fresh, "git", "secure", "verify", "--full"); r.code != 0 {
		t.Fatalf("a fresh clone with the keep ref must verify bob's benign force-push:\n%s", r)
	}
	// A clone through git-secure carries the keep ref and verifies.
	carol := newUser(t, "carol")
	carolDir := carol.path("carol")
	carol.git(carol.sb.Home, "secure", "clone", "-q", w.url, carolDir)
	if got := carol.refValue(carolDir, keep); got != x {
		t.Fatalf("git secure clone did not carry %s (has %q)", keep, got)
	}
	carol.secure(carolDir, "verify")

	// Without the keep ref the state is gone and the rule applies in full.
	auditor.git(fresh, "update-ref", "-d", keep)
	auditor.git(fresh, "reflog", "expire", "--expire=now", "--all")
	auditor.git(fresh, "gc", "-q", "--prune=now")
	if r := auditor.run(fresh, "git", "secure", "verify", "--full"); r.code == 0 || !containsAll(r.stderr, "refs/heads/main, rule crypto", "signer bob is not allowed by this rule", "missing from the repository: state "+x[:12]) {
		t.Fatalf("without the keep ref a fresh clone must refuse, naming the missing state:\n%s", r)
	}

	// A force-push with plain git (bob's own entry) that the server
	// accepts: the server's hook keeps the state it left behind itself.
	a.git(w.aliceDir, "fetch", "-q", "origin")
	a.git(w.aliceDir, "reset", "-q", "--hard", "origin/main")
	x2 := a.commit(w.aliceDir, "ALICE", "alice's second words\n")
	a.git(w.aliceDir, "push", "-q", "origin", "main")
	b.git(dir, "fetch", "-q", w.url, "+refs/heads/main:refs/remotes/origin/main", "+refs/secure/*:refs/secure/*")
	b.git(dir, "checkout", "-q", "-B", "main", "refs/remotes/origin/main~1")
	z := b.commit(dir, "NOTES", "more notes\n")
	log := forge(t, b, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, x2), New: hash(t, z)})
	if r := w.attackPush(w.url, z, log); r.code != 0 {
		t.Fatalf("bob's benign force-push with plain git was refused:\n%s", r)
	}
	if got := w.srv.admin.refs(w.repo)[rsl.KeepRefPrefix+x2]; got != x2 {
		t.Fatalf("the server's hook did not keep %s after a plain-git force-push (has %q)", x2, got)
	}

	// On a forge without the hook, git-secure's push keeps the state.
	plain := w.plainCopy(t)
	b.git(dir, "remote", "add", "forge", plain)
	b.git(dir, "config", "remote.forge.vcs", "secure")
	b.git(dir, "fetch", "-q", "forge")
	b.git(dir, "checkout", "-q", "-B", "main", "refs/remotes/forge/main~1")
	b.commit(dir, "NOTES", "forge notes\n")
	if r := b.run(dir, "git", "push", "-f", "forge", "main"); r.code != 0 {
		t.Fatalf("bob's force-push to the forge was refused:\n%s", r)
	}
	plainPath := w.srv.root + "/plain.git"
	if got := w.srv.admin.refs(plainPath)[rsl.KeepRefPrefix+z]; got != z {
		t.Fatalf("git-secure's push did not keep %s on the forge (has %q)", z, got)
	}

	// Forged keep refs.
	for _, tc := range []struct{ spec, want string }{
		{w.fix + ":" + rsl.KeepRefPrefix + w.vuln, "must point at the commit it names"},
		{w.vuln + ":" + keep, "only ever created, never moved"},
		{":" + keep, "cannot be deleted"},
	} {
		r := b.pushDirect(dir, w.url, "--no-verify", "-f", w.url, tc.spec)
		if r.code == 0 || !containsAll(r.stderr, tc.want) {
			t.Errorf("the server must refuse %s with %q:\n%s", tc.spec, tc.want, r)
		}
	}
	if got := w.srv.admin.refs(w.repo)[keep]; got != x {
		t.Fatalf("%s moved to %q", keep, got)
	}

	// A keep ref for a commit the log records as no ref's state (finding
	// 03 of session 14): plain git, no key, no entry. The server took any
	// commit and then refused its deletion, and every clone carried it.
	junk := strings.TrimSpace(b.git(dir, "commit-tree", "-m", "junk", w.fix+"^{tree}"))
	r := b.pushDirect(dir, w.url, "--no-verify", w.url, junk+":"+rsl.KeepRefPrefix+junk)
	if r.code == 0 || !containsAll(r.stderr, rsl.KeepRefPrefix+junk+": "+junk+" is not a state the log records", "drop it from the push") {
		t.Fatalf("the server must refuse a keep ref for a commit the log does not record:\n%s", r)
	}
	if _, ok := w.srv.admin.refs(w.repo)[rsl.KeepRefPrefix+junk]; ok {
		t.Fatalf("the server created %s", rsl.KeepRefPrefix+junk)
	}
	// One a server took anyway (an older hook, or written past it) is not
	// taken by a fetch: a fresh clone through git-secure leaves it out
	// and says so, and keeps the recorded one.
	junk2 := strings.TrimSpace(w.srv.admin.git(w.repo, "commit-tree", "-m", "junk2", w.fix+"^{tree}"))
	w.srv.admin.git(w.repo, "-c", "core.hooksPath=/dev/null", "update-ref", rsl.KeepRefPrefix+junk2, junk2)
	dave := newUser(t, "dave")
	daveDir := dave.path("dave")
	r = dave.run(dave.sb.Home, "git", "secure", "clone", w.url, daveDir)
	if r.code != 0 || !containsAll(r.stderr, "keep ref(s)", "for commits its log records as no ref's state: not taken") {
		t.Fatalf("a clone of a server with an unrecorded keep ref must leave it out, saying so:\n%s", r)
	}
	if got := dave.refValue(daveDir, rsl.KeepRefPrefix+junk2); got != "" {
		t.Fatalf("git secure clone took %s (%s)", rsl.KeepRefPrefix+junk2, got)
	}
	if got := dave.refValue(daveDir, keep); got != x {
		t.Fatalf("git secure clone did not carry the recorded %s (has %q)", keep, got)
	}
}

// TestFreshCloneForgivesMissingStateItsRuleBlocked: the forgiveness stays
// where it is sound. bob's own README change X (his entry cannot have met
// rule crypto) is force-pushed away by bob on a forge without the hook
// and without a keep ref: a fresh clone lacks X, but X's entry could not
// have changed src/crypto/**, so the diff from the fix is trusted for
// crypto and the clone verifies, warning about X's entry.
func TestFreshCloneForgivesMissingStateItsRuleBlocked(t *testing.T) {
	t.Parallel()
	w := newCryptoWorld(t, false)
	b, dir := w.bob, w.bobDir
	b.git(dir, "checkout", "-q", "-B", "main", w.fix)
	x := b.commit(dir, "README", "bob's words\n")
	if r := b.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("bob's README change was refused:\n%s", r)
	}
	plain := w.plainCopy(t)
	b.git(dir, "fetch", "-q", w.url, "+refs/secure/*:refs/secure/*")
	b.git(dir, "checkout", "-q", "-B", "rewrite", w.fix)
	y := b.commit(dir, "NOTES", "notes\n")
	log := forge(t, b, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, x), New: hash(t, y)})
	if r := w.attackPush(plain, y, log); r.code != 0 {
		t.Fatalf("the forge must take the push:\n%s", r)
	}
	auditor := newUser(t, "auditor")
	fresh := auditor.path("fresh.git")
	auditor.git(auditor.sb.Home, "clone", "-q", "--mirror", plain, fresh)
	if r := auditor.run(fresh, "git", "cat-file", "-e", x); r.code == 0 {
		t.Fatalf("the fresh clone has bob's %s: the scenario needs it missing", x)
	}
	r := auditor.run(fresh, "git", "secure", "verify", "--full")
	if r.code != 0 || !containsAll(r.stderr, "its commits are no longer in the repository") {
		t.Fatalf("a missing state whose entry failed rule crypto must stay forgiven:\n%s", r)
	}
}

// Deleting a keep ref the server does not have says so, through the
// helper and past it: the helper reported it deleted (exit 0) without
// sending anything, and the server's hook said the ref "must point at
// the commit it names, but the push sets it to (deleted)". An existing
// one is still refused as undeletable, and one pushed by hand through the
// helper is said not to be sent (it was reported created).
func TestDeleteMissingKeepRefSaysSo(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("keepdel.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "work", url, true)
	main := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))
	keep := rsl.KeepRefPrefix + main
	r := alice.run(dir, "git", "push", "origin", ":"+keep)
	if r.code == 0 || !strings.Contains(r.stderr, "origin has no "+keep+": there is nothing to delete") || !strings.Contains(r.stderr, "git ls-remote origin 'refs/secure/keep/*'") {
		t.Fatalf("the helper must refuse to delete a keep ref the remote lacks, saying it does not exist:\n%s", r)
	}
	r = alice.pushDirect(dir, url, url, ":"+keep)
	if r.code == 0 || !strings.Contains(r.stderr, keep+" does not exist on this server: there is nothing to delete") || !strings.Contains(r.stderr, "drop it from the push") || strings.Contains(r.stderr, "must point at the commit it names") {
		t.Fatalf("the server must refuse to delete a keep ref it lacks, saying it does not exist:\n%s", r)
	}
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", keep, main)
	alice.git(dir, "update-ref", keep, main)
	r = alice.run(dir, "git", "push", "origin", ":"+keep)
	if r.code == 0 || !strings.Contains(r.stderr, "is never deleted") || !strings.Contains(r.stderr, "git update-ref -d "+keep) || strings.Contains(r.stderr, "nothing to delete") {
		t.Fatalf("the helper must refuse to delete an existing keep ref:\n%s", r)
	}
	if got := srv.admin.refs(path)[keep]; got != main {
		t.Fatalf("%s is %q on the server, want %s", keep, got, main)
	}
	// Created by hand through the helper: not sent, and said so (it was
	// reported created).
	other := strings.TrimSpace(alice.git(dir, "commit-tree", "-m", "other", main+"^{tree}"))
	r = alice.run(dir, "git", "push", "origin", other+":"+rsl.KeepRefPrefix+other)
	if r.code == 0 || !strings.Contains(r.stderr, "not sent: git-secure's push creates keep refs itself") {
		t.Fatalf("the helper must say a keep ref pushed by hand is not sent:\n%s", r)
	}
}
