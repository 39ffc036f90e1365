package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// TestOrgPolicy: two repositories inherit one organisation policy over
// file:// with enforcing servers. bob, a person of the organisation,
// pushes to both; the organisation removes him and he loses push access
// to both after his next fetch, while alice keeps hers; the organisation's
// server put back to the snapshot that still lists bob is detected by a
// fetch, a verify and the repositories' servers.
func TestOrgPolicy(t *testing.T) {
	srv := startServer(t, trFile)
	olga, rita, alice, bob := newUser(t, "olga"), newUser(t, "rita"), newUser(t, "alice"), newUser(t, "bob")

	// The organisation policy repository: persons alice and bob, and a rule
	// for every repository's main.
	orgPath, orgURL := srv.newRepo("org-policy.git", true)
	od := olga.sb.InitRepo("org", 1)
	olga.configure(od)
	olga.git(od, "remote", "add", "origin", orgURL)
	olga.secure(od, "init")
	for _, u := range []*user{alice, bob} {
		olga.secure(od, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	olga.secure(od, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	olga.secure(od, "policy", "apply")
	olga.git(od, "push", "-q", "-u", "origin", "main")
	olgaFP := strings.Fields(olga.must(od, "ssh-keygen", "-lf", olga.key.Public))[1]

	// Two repositories of rita's inherit it.
	var urls []string
	for _, name := range []string{"app1", "app2"} {
		_, url := srv.newRepo(name+".git", true)
		d := rita.sb.InitRepo(name, 1)
		rita.configure(d)
		rita.git(d, "remote", "add", "origin", url)
		rita.secure(d, "init")
		out := rita.secure(d, "policy", "inherit", orgURL, "--root-key", olgaFP)
		if !strings.Contains(out, "staged: inherit the organisation policy at "+orgURL) {
			t.Fatalf("policy inherit says:\n%s", out)
		}
		rita.secure(d, "policy", "apply")
		rita.git(d, "push", "-q", "-u", "origin", "main")
		urls = append(urls, url)
	}
	// A wrong organisation root key is refused when inheriting.
	wd := rita.sb.InitRepo("wrong", 1)
	rita.configure(wd)
	rita.secure(wd, "init")
	if r := rita.run(wd, "git", "secure", "policy", "inherit", orgURL, "--root-key", strings.Fields(rita.must(wd, "ssh-keygen", "-lf", rita.key.Public))[1]); r.code != 1 || !strings.Contains(r.stderr, "root of trust is not the pinned one") {
		t.Fatalf("inherit under another organisation root key:\n%s", r)
	}

	clone := func(u *user, url, name string) string {
		d := u.path(name)
		u.git(u.sb.Home, "clone", "-q", url, d)
		u.configure(d)
		u.secure(d, "hooks", "install")
		u.git(d, "fetch", "-q")
		return d
	}
	var bobs, alices []string
	for i, url := range urls {
		name := filepath.Base(url)
		bobs = append(bobs, clone(bob, url, name))
		alices = append(alices, clone(alice, url, name))
		// The organisation's rule lets bob push main; rita's own key, not a
		// person of it, may not.
		bob.commit(bobs[i], "bob.txt", "1\n")
		if r := bob.run(bobs[i], "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("bob's push to %s under the organisation policy:\n%s", name, r)
		}
		alice.git(alices[i], "pull", "-q")
		entries := srv.admin.rslLog(filepath.Join(srv.root, name))
		if last := entries[len(entries)-1]; last.Ref != "refs/heads/main" {
			t.Fatalf("bob's push was not recorded in %s: %+v", name, last)
		}
		if r := bob.run(bobs[i], "git", "secure", "verify"); r.code != 0 {
			t.Fatalf("verify in bob's clone of %s:\n%s", name, r)
		}
	}
	// A fetch with nothing new still fetches and verifies: the shortcut
	// knows until when the repository's own policy holds, not the
	// organisation's, so it is never taken for a repository that inherits.
	for i := 0; i < 2; i++ {
		trace := alice.path(fmt.Sprintf("org-trace-%d.txt", i))
		if r := alice.run(alices[0], "env", "GIT_TRACE="+trace, "git", "fetch"); r.code != 0 {
			t.Fatalf("alice's fetch %d with nothing new:\n%s", i, r)
		}
		if c := countTraced(t, trace, "git fetch --no-tags"); c[0] != 1 {
			t.Fatalf("alice's fetch %d with nothing new took the shortcut in a repository that inherits (%d private fetches)", i, c[0])
		}
	}
	if msg := srv.admin.git(filepath.Join(srv.root, "app1.git"), "log", "-1", "--format=%B", "refs/secure/rsl"); !strings.Contains(msg, "\norg: ") {
		t.Fatalf("bob's entry names no organisation policy version:\n%s", msg)
	}

	// The organisation removes bob.
	withBob := map[string]string{}
	for _, ref := range []string{"refs/secure/rsl", "refs/secure/policy"} {
		withBob[ref] = srv.admin.rev(orgPath, ref)
	}
	olga.secure(od, "policy", "remove-rule", "org-main")
	olga.secure(od, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice")
	olga.secure(od, "policy", "remove-person", "bob")
	olga.secure(od, "policy", "apply")
	olga.git(od, "push", "-q", "origin", "main")

	for i := range urls {
		bob.commit(bobs[i], "bob.txt", "2\n")
		r := bob.run(bobs[i], "git", "push", "origin", "main")
		if r.code == 0 || !strings.Contains(r.stderr, "is not in the policy") {
			t.Fatalf("bob, removed from the organisation, pushed to %s:\n%s", urls[i], r)
		}
		alice.commit(alices[i], "alice.txt", "1\n")
		if r := alice.run(alices[i], "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("alice's push to %s after bob's removal:\n%s", urls[i], r)
		}
	}

	// One table for the organisation's repositories.
	list := olga.path("repos.txt")
	writeScript(t, list, "# the organisation's repositories\n"+urls[0]+"\n"+urls[1]+"\n")
	r := olga.run(od, "git", "secure", "verify", "--org", list)
	if r.code != 0 || strings.Count(r.stdout, " ok ") != 2 || !strings.Contains(r.stdout, "ORG VERSION") {
		t.Fatalf("verify --org of two verifying repositories:\n%s", r)
	}
	var doc struct {
		OK           bool `json:"ok"`
		Repositories []struct {
			Repository string `json:"repository"`
			OK         bool   `json:"ok"`
			Org        string `json:"org"`
			OrgVersion uint64 `json:"orgVersion"`
		} `json:"repositories"`
	}
	r = olga.run(od, "git", "secure", "verify", "--org", list, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || !doc.OK || len(doc.Repositories) != 2 || doc.Repositories[1].Org != orgURL || doc.Repositories[1].OrgVersion == 0 {
		t.Fatalf("verify --org --json (%v):\n%s", err, r)
	}

	// The organisation's server is put back to the snapshot that lists bob.
	for ref, old := range withBob {
		srv.admin.git(orgPath, "-c", "core.hooksPath=/dev/null", "update-ref", ref, old)
	}
	for i := range urls {
		r := alice.run(alices[i], "git", "fetch", "origin")
		if r.code == 0 || !strings.Contains(r.stderr, "the organisation policy went back") {
			t.Fatalf("a fetch of %s after the organisation's rollback:\n%s", urls[i], r)
		}
		r = alice.run(alices[i], "git", "secure", "verify")
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "the organisation policy went back") {
			t.Fatalf("verify of %s after the organisation's rollback:\n%s", urls[i], r)
		}
	}
	// A fresh mirror has never seen the newer organisation log: the
	// repositories' own logs show the rollback (their entries name a
	// version the organisation's log no longer holds).
	r = olga.run(od, "git", "secure", "verify", "--org", list)
	if r.code != 1 || strings.Count(r.stdout, "FAILED") != 2 || !strings.Contains(r.stdout, "no such organisation policy version") {
		t.Fatalf("verify --org after the organisation's rollback:\n%s", r)
	}
	r = olga.run(od, "git", "secure", "verify", "--org", list, "--json")
	if r.code != 1 || strings.Count(r.stdout, "is newer than its log's latest policy") != 2 {
		t.Fatalf("verify --org --json after the organisation's rollback:\n%s", r)
	}
}

// TestOrgDelegationEndToEnd is issue 19's "done when" with plain git: the
// organisation's rules keys (olga) delegate src/crypto/** to the security
// team (sam), who delegate it on to the crypto maintainers (erin); two
// repositories of rita's inherit the organisation policy. Erin changes her
// own rules alone and both repositories follow after a fetch; widening her
// namespace is refused by add-rule and by apply, and a widened file she
// pushes by hand is ignored beyond it by both repositories; bob, removed by
// the organisation, loses access to both after his next fetch; the
// organisation's server put back to an older policy is detected by both.
func TestOrgDelegationEndToEnd(t *testing.T) {
	srv := startServer(t, trFile)
	olga, sam, erin := newUser(t, "olga"), newUser(t, "sam"), newUser(t, "erin")
	rita, alice, bob := newUser(t, "rita"), newUser(t, "alice"), newUser(t, "bob")

	// The organisation policy: its persons, a rule for every repository's
	// main, and the first level of delegation (rules keys -> security).
	orgPath, orgURL := srv.newRepo("org-policy.git", true)
	od := olga.sb.InitRepo("org", 1)
	olga.configure(od)
	olga.git(od, "remote", "add", "origin", orgURL)
	olga.secure(od, "init")
	for _, u := range []*user{alice, bob, sam, erin} {
		olga.secure(od, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	olga.secure(od, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--allow", "erin")
	olga.secure(od, "policy", "delegate", "security", "--path", "src/crypto/**", "--key", "sam")
	olga.secure(od, "policy", "sign", "--file", "security", "--key", sam.key.Private)
	olga.secure(od, "policy", "apply")
	olga.git(od, "push", "-q", "-u", "origin", "main")

	// Second level, in the security team's own clone (rules keys absent).
	samDir := sam.path("org")
	sam.git(sam.sb.Home, "secure", "clone", orgURL, samDir)
	sam.configure(samDir)
	sam.secure(samDir, "policy", "delegate", "crypto", "--file", "security", "--path", "src/crypto/**", "--key", "erin")
	sam.secure(samDir, "policy", "sign", "--file", "crypto", "--key", erin.key.Private)
	sam.secure(samDir, "policy", "apply")
	sam.git(samDir, "push", "-q", "origin", "main")

	// Third level: erin's first rule, applied by her alone.
	erinOrg := erin.path("org")
	erin.git(erin.sb.Home, "secure", "clone", orgURL, erinOrg)
	erin.configure(erinOrg)
	erin.secure(erinOrg, "policy", "add-rule", "aes", "--file", "crypto", "--ref", "refs/heads/main", "--path", "src/crypto/**", "--allow", "erin")
	erin.secure(erinOrg, "policy", "apply")
	erin.git(erinOrg, "push", "-q", "origin", "main")
	wantAll(t, "policy list --file crypto", erin.run(erinOrg, "git", "secure", "policy", "list", "--file", "crypto"), "rules keys -> security -> crypto", "aes", "signed by erin")

	// Two repositories inherit it.
	names := []string{"app1", "app2"}
	urls := map[string]string{}
	for _, name := range names {
		_, url := srv.newRepo(name+".git", true)
		d := rita.sb.InitRepo(name, 1)
		rita.configure(d)
		writeFile(t, d, "src/crypto/aes.c", "v1\n")
		writeFile(t, d, "src/net/tcp.c", "v1\n")
		rita.git(d, "add", "--", "src")
		rita.git(d, "commit", "-q", "-m", "sources")
		rita.git(d, "remote", "add", "origin", url)
		rita.secure(d, "init")
		rita.secure(d, "policy", "inherit", orgURL, "--root-key", olga.fingerprint())
		rita.secure(d, "policy", "apply")
		rita.git(d, "push", "-q", "-u", "origin", "main")
		urls[name] = url
	}
	clone := func(u *user, name string) string {
		d := u.path(name)
		u.git(u.sb.Home, "clone", "-q", urls[name], d)
		u.configure(d)
		u.secure(d, "hooks", "install")
		u.git(d, "fetch", "-q")
		return d
	}
	alices, bobs, erins := map[string]string{}, map[string]string{}, map[string]string{}
	for _, name := range names {
		alices[name], bobs[name], erins[name] = clone(alice, name), clone(bob, name), clone(erin, name)
	}
	// push pulls, commits file and pushes with plain git.
	push := func(u *user, dir, file, content string) result {
		t.Helper()
		u.git(dir, "pull", "-q", "--ff-only")
		u.commit(dir, file, content)
		r := u.run(dir, "git", "push", "origin", "main")
		if r.code != 0 {
			u.git(dir, "reset", "-q", "--hard", "HEAD~1")
		}
		return r
	}

	// The crypto maintainers' rule governs src/crypto in both: bob and
	// alice may move main, not src/crypto; erin may.
	for _, name := range names {
		r := push(bob, bobs[name], "src/crypto/aes.c", "bob's\n")
		if r.code == 0 {
			t.Fatalf("bob changed src/crypto of %s past the organisation's crypto rule:\n%s", name, r)
		}
		wantAll(t, "bob's crypto push to "+name, r, "crypto:aes")
		if r := push(alice, alices[name], "src/crypto/aes.c", "alice's\n"); r.code == 0 || !strings.Contains(r.stderr, "crypto:aes") {
			t.Fatalf("alice changed src/crypto of %s before erin allowed her:\n%s", name, r)
		}
		// Erin's explain of her pending commit names the chain that decided.
		erin.git(erins[name], "pull", "-q", "--ff-only")
		erin.commit(erins[name], "src/crypto/aes.c", "erin's\n")
		ex := erin.run(erins[name], "git", "secure", "explain", "refs/heads/main")
		wantAll(t, "explain in "+name, ex, "rule crypto:aes", "organisation rules keys -> security -> crypto", "result: satisfied")
		if r := erin.run(erins[name], "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("erin's crypto push to %s:\n%s", name, r)
		}
	}

	// Erin lets alice in, alone: one change of her own rule file, applied
	// and pushed by her; root and rules keys and the security team are
	// nowhere near. Both repositories follow after alice's next fetch.
	erin.git(erinOrg, "pull", "-q", "--ff-only")
	erin.secure(erinOrg, "policy", "remove-rule", "aes", "--file", "crypto")
	erin.secure(erinOrg, "policy", "add-rule", "aes", "--file", "crypto", "--ref", "refs/heads/main", "--path", "src/crypto/**", "--allow", "erin", "--allow", "alice")
	if r := erin.run(erinOrg, "git", "secure", "policy", "apply"); r.code != 0 {
		t.Fatalf("erin could not apply a change of her own rule file alone:\n%s", r)
	}
	erin.git(erinOrg, "push", "-q", "origin", "main")
	for _, name := range names {
		if r := push(alice, alices[name], "src/crypto/aes.c", "alice's\n"); r.code != 0 {
			t.Fatalf("alice's crypto push to %s after erin allowed her:\n%s", name, r)
		}
	}

	// Widening her namespace: refused by add-rule, and by apply for a
	// staged change written by hand.
	r := erin.run(erinOrg, "git", "secure", "policy", "add-rule", "net", "--file", "crypto", "--ref", "refs/heads/main", "--path", "src/net/**", "--allow", "erin")
	if r.code == 0 || !strings.Contains(r.stderr, "covers src/net/**, beyond crypto's paths src/crypto/**") {
		t.Fatalf("erin's rule beyond her namespace was staged:\n%s", r)
	}
	staged := stageWidenedRuleFile(t, erin, erinOrg)
	r = erin.run(erinOrg, "git", "secure", "policy", "apply", "--staged", staged[:12])
	if r.code == 0 {
		t.Fatalf("apply of a staged crypto file reaching src/** succeeded:\n%s", r)
	}
	wantAll(t, "apply of the widened staged file", r, "rule file crypto reaches beyond its delegation: rule grab covers src/**, beyond crypto's paths src/crypto/**")
	erin.secure(erinOrg, "policy", "discard")
	// The same file signed and pushed by hand (a modified client) is hers
	// to sign: the organisation's server takes it, and both repositories
	// ignore it beyond src/crypto/** (bob still changes src/net), with a
	// warning naming the organisation's file.
	erin.git(erinOrg, "fetch", "-q", "origin")
	widenRuleFile(t, erin, erinOrg)
	if r := erin.pushDirect(erinOrg, orgURL, "--atomic", "--no-verify", orgURL, "refs/secure/policy:refs/secure/policy", "refs/secure/rsl:refs/secure/rsl"); r.code != 0 {
		t.Fatalf("the organisation's server refused erin's widened (hers to sign) rule file:\n%s", r)
	}
	for _, name := range names {
		if r := push(bob, bobs[name], "src/net/tcp.c", "bob's\n"); r.code != 0 {
			t.Fatalf("erin's widened rule took src/net of %s from bob:\n%s", name, r)
		}
		v := bob.run(bobs[name], "git", "secure", "verify")
		if v.code != 0 {
			t.Fatalf("verify of %s after the widening:\n%s", name, v)
		}
		wantAll(t, "verify of "+name+" after the widening", v, "organisation rule file crypto: rule grab covers src/**, beyond crypto's paths src/crypto/**: ignored there")
		if r := push(bob, bobs[name], "src/crypto/aes.c", "bob's again\n"); r.code == 0 || !strings.Contains(r.stderr, "crypto:aes") {
			t.Fatalf("bob changed src/crypto of %s after the widening:\n%s", name, r)
		}
	}

	// The organisation removes bob: he loses access to both after his
	// next fetch, alice keeps hers.
	withBob := map[string]string{}
	for _, ref := range []string{"refs/secure/rsl", "refs/secure/policy"} {
		withBob[ref] = srv.admin.rev(orgPath, ref)
	}
	olga.git(od, "pull", "-q", "--ff-only")
	olga.secure(od, "policy", "remove-rule", "org-main")
	olga.secure(od, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "erin")
	olga.secure(od, "policy", "remove-person", "bob")
	olga.secure(od, "policy", "apply")
	olga.git(od, "push", "-q", "origin", "main")
	for _, name := range names {
		r := push(bob, bobs[name], "src/net/tcp.c", "bob's, removed\n")
		if r.code == 0 || !strings.Contains(r.stderr, "is not in the policy") {
			t.Fatalf("bob, removed from the organisation, pushed to %s:\n%s", name, r)
		}
		if r := push(alice, alices[name], "src/net/tcp.c", "alice's\n"); r.code != 0 {
			t.Fatalf("alice's push to %s after bob's removal:\n%s", name, r)
		}
	}

	// The organisation removes erin, whom the security team's file names
	// as the crypto file's signer and whose rule names her: the rules keys
	// alone do it; both files count for nothing and src/crypto fails
	// closed in both repositories, until the security team delegates
	// crypto anew (to alice), alone.
	olga.secure(od, "policy", "remove-rule", "org-main")
	olga.secure(od, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice")
	out := olga.secure(od, "policy", "remove-person", "erin")
	for _, want := range []string{
		"warning: rule file security (delegated: rules keys -> security) names erin, removed: it counts for nothing from this change on, and every update in its namespace (file:src/crypto/**) fails until it is mended",
		"warning: rule file crypto (delegated: rules keys -> security -> crypto) names erin, removed",
		"the signers of rule file security must delegate it anew (git secure policy remove-delegation crypto, then delegate crypto --file security with other signers)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("remove-person erin lacks %q:\n%s", want, out)
		}
	}
	if r := olga.run(od, "git", "secure", "policy", "apply"); r.code != 0 {
		t.Fatalf("the rules keys' removal of erin, named by rule files:\n%s", r)
	}
	olga.git(od, "push", "-q", "origin", "main")
	for _, name := range names {
		r := push(alice, alices[name], "src/crypto/aes.c", "alice's, closed\n")
		if r.code == 0 {
			t.Fatalf("alice changed src/crypto of %s after erin's removal closed it:\n%s", name, r)
		}
		wantAll(t, "alice's crypto push to "+name+" after erin's removal", r, "rule file security counts for nothing", `"erin"`)
		if r := push(alice, alices[name], "src/net/tcp.c", "alice's, open\n"); r.code != 0 {
			t.Fatalf("alice's push of src/net to %s after erin's removal:\n%s", name, r)
		}
	}
	sam.git(samDir, "pull", "-q", "--ff-only")
	sam.secure(samDir, "policy", "remove-delegation", "crypto")
	sam.secure(samDir, "policy", "delegate", "crypto", "--file", "security", "--path", "src/crypto/**", "--key", "alice")
	sam.secure(samDir, "policy", "sign", "--file", "crypto", "--key", alice.key.Private)
	if r := sam.run(samDir, "git", "secure", "policy", "apply"); r.code != 0 {
		t.Fatalf("the security team mends its file alone:\n%s", r)
	}
	sam.git(samDir, "push", "-q", "origin", "main")
	for _, name := range names {
		if r := push(alice, alices[name], "src/crypto/aes.c", "alice's, mended\n"); r.code != 0 {
			t.Fatalf("alice's crypto push to %s after the security team mended its file:\n%s", name, r)
		}
		if r := alice.run(alices[name], "git", "secure", "verify"); r.code != 0 {
			t.Fatalf("verify of %s after erin's removal and the mending:\n%s", name, r)
		}
	}

	// The organisation's server is put back to the policy that still
	// lists bob: both repositories detect it on the next fetch and verify.
	for ref, old := range withBob {
		srv.admin.git(orgPath, "-c", "core.hooksPath=/dev/null", "update-ref", ref, old)
	}
	for _, name := range names {
		r := alice.run(alices[name], "git", "fetch", "origin")
		if r.code == 0 || !strings.Contains(r.stderr, "the organisation policy went back") {
			t.Fatalf("a fetch of %s after the organisation's rollback:\n%s", name, r)
		}
		r = alice.run(alices[name], "git", "secure", "verify")
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "the organisation policy went back") {
			t.Fatalf("verify of %s after the organisation's rollback:\n%s", name, r)
		}
	}
}

// stageWidenedRuleFile writes, as the staged change of u's clone dir, the
// policy in force with its crypto rule file widened to src/** and signed
// by u (widenedRuleFile), and returns the staged commit.
func stageWidenedRuleFile(t *testing.T, u *user, dir string) string {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(dir, u.sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	p, polTip := widenedRuleFile(t, u, g)
	who := gitrepo.Ident{Name: u.name, Email: u.name + "@example.com", When: time.Now().Truncate(time.Second)}
	h, err := policy.Save(g, p, polTip, who, "git-secure policy (staged): widened by hand")
	if err != nil {
		t.Fatal(err)
	}
	u.git(dir, "update-ref", policy.StagingRef, h.String())
	return h.String()
}
