package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// A leaked bridge key used by hand: an entry it signs moving a protected
// branch without persons' approvals fails verification (the bridge never
// counts), and a policy entry or an annotation it signs is refused
// whatever it says.
func TestForgeBridgeEntryAttacks(t *testing.T) {
	alice, bob, carol, bridge := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge")
	dir := benchRepo(t, alice, "work", "", true)
	alice.secure(dir, "policy", "remove-rule", "protect-main")
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "bob-gh")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2", "--tree-approvals")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	if r := alice.run(dir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify before the attacks:\n%s", r)
	}
	start := strings.TrimSpace(alice.git(dir, "rev-parse", rsl.Ref))
	recorded := strings.TrimSpace(alice.git(dir, "rev-parse", "main"))
	evil := alice.commit(dir, "evil.txt", "nobody reviewed this\n")
	policyTip := strings.TrimSpace(alice.git(dir, "rev-parse", policy.Ref))
	// A real next policy, signed by the root: alice stages and signs a
	// change; the bridge tries to record it.
	alice.secure(dir, "policy", "add-person", "dave", "--key", newUser(t, "dave").key.Public)
	alice.secure(dir, "policy", "sign")
	nextPolicy := strings.TrimSpace(alice.git(dir, "rev-parse", policy.StagingRef))

	repo, err := gitrepo.OpenWithEnv(dir, alice.sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	s, err := sign.LoadSigner(sign.KeySpec{File: bridge.key.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hash := func(x string) gitrepo.Hash {
		h, err := gitrepo.ParseHash(x)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tipCommit, err := repo.ReadCommit(hash(start))
	if err != nil {
		t.Fatal(err)
	}
	tipEntry, err := rsl.FromCommit(tipCommit)
	if err != nil {
		t.Fatal(err)
	}
	// forge appends one bridge-signed entry on the original log and
	// returns what verify says of it.
	forge := func(e *rsl.Entry) result {
		t.Helper()
		e.Number = tipEntry.Number + 1
		who := gitrepo.Ident{Name: "mallory", Email: "mallory@example.com", When: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
		id, err := rsl.Write(repo, e, hash(start), who, func(p []byte) ([]byte, error) { return sign.SignSSHSig(s, p, sign.NamespaceGit) })
		if err != nil {
			t.Fatal(err)
		}
		alice.git(dir, "update-ref", rsl.Ref, id.String())
		return alice.run(dir, "git", "secure", "verify", "--full")
	}

	tests := []struct {
		name  string
		entry *rsl.Entry
		want  []string
	}{
		{"a move without approvals", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(recorded), New: hash(evil)},
			[]string{"refs/heads/main", "rule reviewed", "needs 2 of bob, carol, has 0", "signed by forge app ci-bridge (a move the forge made): the bridge is no person and never counts"}},
		{"a policy entry", &rsl.Entry{Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: hash(policyTip), New: hash(nextPolicy)},
			[]string{"signed by forge app ci-bridge", "which may sign only the entries of ref updates, never a policy entry or an annotation"}},
		{"an annotation", &rsl.Entry{Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: tipEntry.Number, ID: hash(start)}}, Reason: "undo"},
			[]string{"signed by forge app ci-bridge", "which may sign only the entries of ref updates, never a policy entry or an annotation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := forge(tt.entry)
			out := r.stdout + r.stderr
			for _, w := range tt.want {
				if r.code != 1 || !strings.Contains(out, w) {
					t.Fatalf("verify must fail saying %q:\n%s", w, r)
				}
			}
		})
	}
}

// The server hook where one runs judges a bridge entry as verification
// does: the CI job's entry of a move the persons approved (tree-bound,
// with their own keys here) is accepted; a hand-made bridge entry of an
// unapproved move is refused, naming the rule.
func TestForgeBridgeEntryOnEnforcingServer(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("hooked.git", true)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "remove-rule", "protect-main")
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public)
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2", "--tree-approvals")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	alice.git(dir, "checkout", "-q", "-b", "review/1")
	head := alice.commit(dir, "f.txt", "reviewed\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/1")
	alice.git(dir, "checkout", "-q", "main")
	for _, u := range []*user{bob, carol} {
		alice.secure(dir, "attest", "approve", "main", "--to", head, "--tree", "--key", u.key.Private)
	}
	alice.git(dir, "push", "-q", "origin", "refs/secure/attestations")

	// An administrator merges on the server with the hooks off (as a
	// forge's merge button that bypasses them would): a merge commit with
	// the reviewed tree.
	hooksOff := []string{"-c", "core.hooksPath=/dev/null"}
	server := func(args ...string) string {
		return strings.TrimSpace(srv.admin.git(path, append(hooksOff, args...)...))
	}
	base := server("rev-parse", "refs/heads/main")
	x := server("commit-tree", server("rev-parse", head+"^{tree}"), "-p", base, "-p", head, "-m", "Merge pull request #1")
	server("update-ref", "refs/heads/main", x, base)

	d := checkoutLikeActions(ci, url, "job", x, "refs/remotes/origin/main")
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
		t.Fatalf("fetch step:\n%s", r)
	}
	env := []string{"GITHUB_EVENT_NAME=push", "GITHUB_REF=refs/heads/main", "GITHUB_SHA=" + x, "GIT_SECURE_BRIDGE_KEY_FILE=" + bridge.key.Private, "GITHUB_STEP_SUMMARY=" + ci.path("s.md")}
	if r := runCI(ci, d, env, "record-merge"); r.code != 0 || !strings.Contains(r.stderr, "signed by forge app ci-bridge, approved by bob, carol") {
		t.Fatalf("the bridge's entry of an approved merge must be accepted by the server hook:\n%s", r)
	}
	if got := server("rev-parse", "refs/secure/rsl"); got != strings.TrimSpace(ci.git(d, "rev-parse", "refs/secure/rsl")) {
		t.Fatalf("the server's log is not the job's")
	}

	// A hand-made bridge entry of an unapproved move, pushed to the hook.
	evil := server("commit-tree", server("rev-parse", "refs/heads/main^{tree}"), "-p", x, "-m", "nobody reviewed this")
	server("update-ref", "refs/heads/main", evil, x)
	repo, err := gitrepo.OpenWithEnv(d, ci.sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	ci.git(d, "fetch", "-q", "origin", "refs/heads/main")
	s, err := sign.LoadSigner(sign.KeySpec{File: bridge.key.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tip, err := gitrepo.ParseHash(strings.TrimSpace(ci.git(d, "rev-parse", "refs/secure/rsl")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	last, err := rsl.FromCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	oldH, _ := gitrepo.ParseHash(x)
	newH, _ := gitrepo.ParseHash(evil)
	e := &rsl.Entry{Number: last.Number + 1, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: oldH, New: newH}
	id, err := rsl.Write(repo, e, tip, gitrepo.Ident{Name: "mallory", Email: "m@example.com", When: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)},
		func(p []byte) ([]byte, error) { return sign.SignSSHSig(s, p, sign.NamespaceGit) })
	if err != nil {
		t.Fatal(err)
	}
	r := ci.run(d, "git", "push", "origin", id.String()+":refs/secure/rsl")
	if r.code == 0 || !strings.Contains(r.stderr, "rule reviewed") || !strings.Contains(r.stderr, "signed by forge app ci-bridge") {
		t.Fatalf("the hook must refuse a bridge entry of an unapproved move:\n%s", r)
	}
}
