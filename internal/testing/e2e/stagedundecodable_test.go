package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestStagedUndecodableReplaced: the server's rule for replacing the staged
// policy change, on staged changes that pass its cheap checks but do not
// decode (policy.CheckStaged, then go-tuf refuses them), which the server
// never decodes when it need not. mallory (push access, no key) plants a
// 4 MiB targets.json of small values: alice's signed change replaces it;
// mallory cannot put it back over alice's signed change, nor a copy of
// alice's change (her signatures and all) with a rule file that makes it
// unusable, nor that copy with a 1 MiB junk rule file (refused before it
// is decoded). Each refusal says why, and alice's change stays.
func TestStagedUndecodableReplaced(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("undecodable.git", true)
	alice, bob, mallory := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")
	dir := benchRepo(t, alice, "one", url, true)
	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.git(mdir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	pol := mallory.rev(mdir, "refs/secure/policy")

	mktree := func(entries string) string {
		t.Helper()
		r := mallory.runStdin(mdir, []byte(entries), "git", "mktree")
		if r.code != 0 {
			t.Fatalf("mktree:\n%s", r)
		}
		return r.stdout
	}
	blob := func(name string, data []byte) string {
		t.Helper()
		path := mallory.path(name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return mallory.git(mdir, "hash-object", "-w", path)
	}
	hostileTargets := blob("targets.json", undecodableTargets(4<<20))
	hostile := mallory.git(mdir, "commit-tree", mktree("100644 blob "+mallory.rev(mdir, pol+":root.json")+"\troot.json\n100644 blob "+hostileTargets+"\ttargets.json\n"), "-p", pol, "-m", "staged")
	if r := mallory.run(mdir, "git", "push", url, hostile+":refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("mallory plants a staged change that does not decode (the server does not decode it):\n%s", r)
	}

	// alice's change signed by her (the rules need bob's too) replaces
	// the plant, which holds no signature the policy in force trusts.
	alice.git(dir, "fetch", "-q")
	alice.run(dir, "git", "secure", "policy", "discard")
	alice.secure(dir, "trust", "add-rules-key", bob.key.Public)
	alice.secure(dir, "trust", "set-rules-threshold", "2")
	if r := alice.run(dir, "git", "secure", "policy", "apply"); r.code != 1 || !strings.Contains(r.stderr, "does not have enough signatures yet") {
		t.Fatalf("apply with bob's signature missing: want it pending:\n%s", r)
	}
	proposal := alice.rev(dir, "refs/secure/policy-staging")
	if r := alice.run(dir, "git", "push"); r.code != 0 || !strings.Contains(r.stderr, "sent the staged policy") {
		t.Fatalf("alice's push of her signed staged change over the undecodable plant:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/policy-staging"); got != proposal {
		t.Fatalf("the server's staged change is %s, want alice's %s (the plant was %s)", got, proposal, hostile)
	}

	const replaced = "refs/secure/policy-staging can only grow, or be replaced by a staged change of the policy in force that keeps every signature of the one it replaces"
	mallory.git(mdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	r := mallory.run(mdir, "git", "push", url, "+"+hostile+":refs/secure/policy-staging")
	if r.code == 0 || !containsAll(r.stderr, replaced, "the staged change it holds ("+proposal[:12]+") is signed by "+alice.fingerprint()+", and the new one is not signed by them") {
		t.Fatalf("the undecodable plant over alice's signed change: want a refusal naming her signature:\n%s", r)
	}
	// alice's files as they are, signatures and all, and a rule file no
	// file delegates: every signature kept, but it can never be applied.
	stray := mktree("100644 blob " + blob("stray.json", []byte(`{"signatures":[],"signed":{"_type":"targets","expires":"2027-01-02T03:04:05Z"}}`)) + "\tstray.json\n")
	copied := mallory.git(mdir, "commit-tree", mktree("100644 blob "+mallory.rev(mdir, proposal+":root.json")+"\troot.json\n100644 blob "+mallory.rev(mdir, proposal+":targets.json")+"\ttargets.json\n040000 tree "+stray+"\trules\n"), "-p", pol, "-m", "staged")
	r = mallory.run(mdir, "git", "push", url, "+"+copied+":refs/secure/policy-staging")
	if r.code == 0 || !containsAll(r.stderr, replaced, "the new one ("+copied[:12]+") keeps the signatures of the staged change it replaces ("+proposal[:12]+") but is not a policy", "rule files without a delegation") {
		t.Fatalf("a copy of alice's signed change that does not decode: want a refusal saying so:\n%s", r)
	}
	// The same copy with a 1 MiB junk rule file: refused before the
	// server decodes it (what no key signed may hold at most 256 KiB).
	junk := mktree("100644 blob " + blob("junk.json", undecodableTargets(1<<20)) + "\tjunk.json\n")
	copied = mallory.git(mdir, "commit-tree", mktree("100644 blob "+mallory.rev(mdir, proposal+":root.json")+"\troot.json\n100644 blob "+mallory.rev(mdir, proposal+":targets.json")+"\ttargets.json\n040000 tree "+junk+"\trules\n"), "-p", pol, "-m", "staged")
	r = mallory.run(mdir, "git", "push", url, "+"+copied+":refs/secure/policy-staging")
	if r.code == 0 || !containsAll(r.stderr, replaced, "the new one ("+copied[:12]+") keeps the signatures of the staged change it replaces ("+proposal[:12]+") but holds", "bytes that no key of the policy in force signed (rules/junk.json): a replacement may hold at most 262144 such bytes", "so the server does not decode it") {
		t.Fatalf("a copy of alice's signed change with a junk rule file: want a refusal before decoding:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/policy-staging"); got != proposal {
		t.Fatalf("the server's staged change is %s, want alice's %s", got, proposal)
	}
}

// undecodableTargets returns a targets.json of about size bytes that the
// server's cheap checks accept (strict JSON, canonical, every array
// within the item bound) and that go-tuf's decoder refuses after
// spending some 100 bytes a byte on it.
func undecodableTargets(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"signatures":[],"signed":{"_type":"targets","expires":"2027-01-02T03:04:05Z","pad":[`)
	for n := 0; b.Len() < size-1000; n++ {
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString("[0" + strings.Repeat(",0", 499) + "]")
	}
	b.WriteString("]}}")
	return []byte(b.String())
}
