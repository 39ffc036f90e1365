package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// wantAll fails unless every sub is in s.
func wantAll(t *testing.T, what string, r result, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(r.stdout+"\n"+r.stderr, sub) {
			t.Errorf("%s: output lacks %q:\n%s", what, sub, r)
		}
	}
}

// TestDelegationThreeLevels: the rules keys (alice) delegate src/crypto/**
// to the security team (sam), who delegate it on to the crypto maintainers
// (erin). Erin then changes her own rules alone, with the rules keys and
// the security team nowhere near, and a plain git push to an enforcing
// server carries the change. Her rule then governs src/crypto on main: bob
// cannot change it, she can. Widening her namespace is refused by the
// command, and a widened file she signs and pushes by hand is accepted
// but ignored beyond the namespace (with a warning): bob still changes
// src/net freely.
func TestDelegationThreeLevels(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("deleg.git", true)
	alice, sam, erin, bob := newUser(t, "alice"), newUser(t, "sam"), newUser(t, "erin"), newUser(t, "bob")

	dir := alice.sb.InitRepo("alice", 1)
	alice.configure(dir)
	writeFile(t, dir, "src/crypto/aes.c", "v1\n")
	writeFile(t, dir, "src/net/tcp.c", "v1\n")
	alice.git(dir, "add", "--", "src")
	alice.git(dir, "commit", "-q", "-m", "sources")
	alice.git(dir, "remote", "add", "origin", url)
	alice.secure(dir, "init")
	for _, u := range []*user{alice, sam, erin, bob} {
		alice.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	alice.secure(dir, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--allow", "sam", "--allow", "erin")
	alice.secure(dir, "policy", "delegate", "security", "--path", "src/crypto/**", "--key", sam.key.Public)
	// The new rule file needs its own signers too: the rules keys alone
	// cannot hand the security team an empty file they never agreed to.
	r := alice.run(dir, "git", "secure", "policy", "apply")
	if r.code == 0 {
		t.Fatalf("apply without the security team's signature on its rule file succeeded:\n%s", r)
	}
	wantAll(t, "apply before sam signs", r, "rule file security: 0 of 1 signatures", "sam")
	alice.secure(dir, "policy", "sign", "--file", "security", "--key", sam.key.Private)
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")

	// The security team delegates to the crypto maintainers, in its own
	// clone, without the rules keys.
	samDir := sam.path("sam")
	sam.git(sam.sb.Home, "secure", "clone", url, samDir)
	sam.configure(samDir)
	if r := sam.run(samDir, "git", "secure", "policy", "delegate", "wide", "--file", "security", "--path", "src/**", "--key", "erin"); r.code == 0 || !strings.Contains(r.stderr, "a rule file can only delegate within its own namespace") {
		t.Fatalf("sam delegated beyond his namespace:\n%s", r)
	}
	sam.secure(samDir, "policy", "delegate", "crypto", "--file", "security", "--path", "src/crypto/**", "--key", "erin")
	sam.secure(samDir, "policy", "sign", "--file", "crypto", "--key", erin.key.Private)
	sam.secure(samDir, "policy", "apply")
	sam.git(samDir, "push", "-q", "origin", "main")

	// Erin adds her rule alone: her key signs the crypto file and the log
	// entry, and a plain git push carries it.
	erinDir := erin.path("erin")
	erin.git(erin.sb.Home, "secure", "clone", url, erinDir)
	erin.configure(erinDir)
	r = erin.run(erinDir, "git", "secure", "policy", "add-rule", "net", "--file", "crypto", "--ref", "refs/heads/main", "--path", "src/net/**", "--allow", "erin")
	if r.code == 0 || !strings.Contains(r.stderr, "covers src/net/**, beyond crypto's paths src/crypto/**") {
		t.Fatalf("erin's rule beyond her namespace was staged:\n%s", r)
	}
	erin.secure(erinDir, "policy", "add-rule", "aes", "--file", "crypto", "--ref", "refs/heads/main", "--path", "src/crypto/**", "--allow", "erin")
	r = erin.run(erinDir, "git", "secure", "policy", "apply")
	if r.code != 0 {
		t.Fatalf("erin could not apply a change of her own rule file alone:\n%s", r)
	}
	erin.git(erinDir, "push", "-q", "origin", "main")
	if got, want := srv.admin.refs(repo)[policy.Ref], erin.rev(erinDir, policy.Ref); got != want {
		t.Fatalf("server policy %s, want erin's %s", got, want)
	}
	list := erin.secure(erinDir, "policy", "list", "--file", "crypto")
	for _, want := range []string{"rules keys -> security -> crypto", "aes", "signed by erin"} {
		if !strings.Contains(list, want) {
			t.Errorf("policy list --file crypto lacks %q:\n%s", want, list)
		}
	}

	// Bob may move main, but not src/crypto any more.
	bobDir := bob.path("bob")
	bob.git(bob.sb.Home, "secure", "clone", url, bobDir)
	bob.configure(bobDir)
	bob.commit(bobDir, "src/crypto/aes.c", "bob's\n")
	r = bob.run(bobDir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("bob changed src/crypto past erin's rule:\n%s", r)
	}
	wantAll(t, "bob's crypto push", r, "crypto:aes")
	// Erin's explain names the chain of delegations that decided.
	erin.git(erinDir, "pull", "-q", "origin", "main")
	erin.commit(erinDir, "src/crypto/aes.c", "erin's\n")
	ex := erin.run(erinDir, "git", "secure", "explain", "refs/heads/main")
	wantAll(t, "explain", ex, "rule crypto:aes", "delegated: rules keys -> security -> crypto", "result: satisfied")
	erin.git(erinDir, "push", "-q", "origin", "main")

	// Erin widens her own file by hand (what a modified client does),
	// signs it and pushes policy and entry with plain git. The server
	// accepts it (the file is hers to change) but the rule counts only
	// inside src/crypto/**.
	erin.git(erinDir, "fetch", "-q", "origin")
	widenRuleFile(t, erin, erinDir)
	r = erin.pushDirect(erinDir, url, "--atomic", "--no-verify", url, "refs/secure/policy:refs/secure/policy", "refs/secure/rsl:refs/secure/rsl")
	if r.code != 0 {
		t.Fatalf("the server refused erin's widened (hers to sign) rule file:\n%s", r)
	}
	v := erin.run(erinDir, "git", "secure", "verify")
	wantAll(t, "verify after widening", v, "rule file crypto: rule grab covers src/**, beyond crypto's paths src/crypto/**: ignored there")
	if v.code != 0 {
		t.Fatalf("verify failed:\n%s", v)
	}
	bob.git(bobDir, "fetch", "-q", "origin")
	bob.git(bobDir, "reset", "-q", "--hard", "origin/main")
	bob.commit(bobDir, "src/net/tcp.c", "bob's\n")
	if r := bob.run(bobDir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("erin's widened rule took src/net from bob:\n%s", r)
	}
	// And bob's crypto change is still refused, with his own entry,
	// straight at the server.
	r = pushWithOwnEntry(t, bob, bobDir, url, "src/crypto/bob.c")
	if r.code == 0 {
		t.Fatalf("the server accepted bob's crypto change:\n%s", r)
	}
	wantAll(t, "bob's own entry", r, "crypto:aes", "protected files changed: src/crypto/bob.c")
	srv.admin.git(repo, "secure", "verify", "--full")
}

// widenRuleFile adds to the crypto rule file of the policy in force a rule
// on src/** (beyond its namespace), signs the file with u's key, and
// records the new policy with an entry u signs: refs/secure/policy and
// refs/secure/rsl move locally.
func widenRuleFile(t *testing.T, u *user, dir string) {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(dir, u.sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	p, polTip := widenedRuleFile(t, u, g)
	who := gitrepo.Ident{Name: u.name, Email: u.name + "@example.com", When: time.Now().Truncate(time.Second)}
	pc, err := policy.Save(g, p, polTip, who, "widened by hand")
	if err != nil {
		t.Fatal(err)
	}
	tip := u.rev(dir, rsl.Ref)
	h := forge(t, u, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: polTip, New: pc})
	u.git(dir, "update-ref", rsl.Ref, h, tip)
	u.git(dir, "update-ref", policy.Ref, pc.String(), polTip.String())
}

// widenedRuleFile returns the policy in force in g with a rule on src/**
// (beyond its namespace) added to its crypto rule file, which u's key
// signs, and the policy commit it was made from.
func widenedRuleFile(t *testing.T, u *user, g *gitrepo.Repo) (*policy.Policy, gitrepo.Hash) {
	t.Helper()
	polTip, _, err := g.ResolveRef(policy.Ref)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := policy.Load(g, polTip)
	if err != nil {
		t.Fatal(err)
	}
	root, targets, err := cur.Encode()
	if err != nil {
		t.Fatal(err)
	}
	files, err := cur.EncodeRuleFiles()
	if err != nil {
		t.Fatal(err)
	}
	grab := []byte(`"roles":[{"keyids":[],"name":"grab","paths":["git:refs/heads/main","file:src/**"],"terminating":false,"threshold":1,"x-git-secure-allow":["erin"]},`)
	widened := bytes.Replace(files["crypto"], []byte(`"roles":[`), grab, 1)
	files["crypto"] = widened
	p, err := policy.ParseFiles(root, targets, files)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := p.RuleFile("crypto")
	f.Meta.Signed.Version++
	s, err := sign.LoadSigner(sign.KeySpec{File: u.key.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts, err := sign.TUFSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SignRuleFile("crypto", ts); err != nil {
		t.Fatal(err)
	}
	return p, polTip
}
