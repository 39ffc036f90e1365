package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
