package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/rsl"
)

// orgFixture is an organisation policy repository (olga's, persons alice
// and bob, rule org-main: main needs one of them) and member
// repositories of rita's that inherit it, all over file://.
type orgFixture struct {
	srv                     *server
	olga, rita, alice, bob  *user
	orgPath, orgURL, orgDir string
	members                 map[string]string // name -> URL
}

// newOrgFixture makes the organisation repository and one member
// repository per name (with enforcing hooks when enforce); prepare runs in
// each member's working directory before its inheriting policy is applied.
func newOrgFixture(t testing.TB, enforce bool, prepare func(f *orgFixture, dir string), names ...string) *orgFixture {
	t.Helper()
	f := &orgFixture{srv: startServer(t, trFile), members: map[string]string{}}
	f.olga, f.rita, f.alice, f.bob = newUser(t, "olga"), newUser(t, "rita"), newUser(t, "alice"), newUser(t, "bob")
	f.orgPath, f.orgURL = f.srv.newRepo("org-policy.git", true)
	f.orgDir = f.olga.sb.InitRepo("org", 1)
	f.olga.configure(f.orgDir)
	f.olga.git(f.orgDir, "remote", "add", "origin", f.orgURL)
	f.olga.secure(f.orgDir, "init")
	for _, u := range []*user{f.alice, f.bob} {
		f.olga.secure(f.orgDir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	f.olga.secure(f.orgDir, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	f.olga.secure(f.orgDir, "policy", "apply")
	f.olga.git(f.orgDir, "push", "-q", "-u", "origin", "main")
	for _, name := range names {
		_, url := f.srv.newRepo(name+".git", enforce)
		d := f.rita.sb.InitRepo(name, 1)
		f.rita.configure(d)
		f.rita.git(d, "remote", "add", "origin", url)
		f.rita.secure(d, "init")
		f.rita.secure(d, "policy", "inherit", f.orgURL, "--root-key", f.olga.fingerprint())
		if prepare != nil {
			prepare(f, d)
		}
		f.rita.secure(d, "policy", "apply")
		f.rita.git(d, "push", "-q", "-u", "origin", "main")
		f.members[name] = url
	}
	return f
}

// clone clones member name for u, with git-secure's hooks.
func (f *orgFixture) clone(u *user, name, dir string) string {
	d := u.path(dir)
	u.git(u.sb.Home, "clone", "-q", f.members[name], d)
	u.configure(d)
	u.secure(d, "hooks", "install")
	u.git(d, "fetch", "-q")
	return d
}

// orgLine returns the org: line of the newest entry of the log in gitDir.
func orgLine(t *testing.T, u *user, gitDir string) string {
	t.Helper()
	msg := u.git(gitDir, "log", "-1", "--format=%B", "refs/secure/rsl")
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "org: ") {
			return l
		}
	}
	return ""
}

// Issue 19 item 2: the forge bridge's entry (git secure forge
// record-merge) in a repository that inherits an organisation policy
// names the organisation's version and is judged by its rules: the
// organisation's rule on main refuses the forge's move until a person of
// the organisation approved it, then the entry is recorded and a fresh
// clone verifies it.
func TestOrgForgeRecordMerge(t *testing.T) {
	bridge := newUser(t, "bridge")
	f := newOrgFixture(t, false, func(f *orgFixture, d string) {
		f.rita.secure(d, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	}, "gh")
	path := f.srv.root + "/gh.git"

	// alice pushes a branch; the forge merges it into main (a ref move
	// on the server that nobody records).
	ad := f.clone(f.alice, "gh", "gh")
	f.alice.git(ad, "checkout", "-q", "-b", "review/1")
	x := f.alice.commit(ad, "feature.txt", "1\n")
	f.alice.git(ad, "push", "-q", "origin", "review/1")
	base := strings.TrimSpace(f.srv.admin.git(path, "rev-parse", "refs/heads/main"))
	f.srv.admin.git(path, "update-ref", "refs/heads/main", x, base)

	// The bridge's job: a clone, the metadata, record-merge.
	ci := newUser(t, "ci")
	d := ci.path("job")
	ci.git(ci.sb.Home, "clone", "-q", f.members["gh"], d)
	ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	r := ci.run(d, "git", "secure", "forge", "record-merge", "refs/heads/main", "--to", x, "--key", bridge.key.Private)
	if r.code == 0 || !strings.Contains(r.stderr, "org-main") {
		t.Fatalf("record-merge of a move the organisation's rule does not allow yet:\n%s", r)
	}
	// alice, a person of the organisation, approves; the bridge records.
	f.alice.secure(ad, "attest", "approve", "main", "--to", x, "--key", f.alice.key.Private, "--no-fetch")
	f.alice.git(ad, "push", "-q", "origin", "refs/secure/attestations")
	ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	r = ci.run(d, "git", "secure", "forge", "record-merge", "refs/heads/main", "--to", x, "--key", bridge.key.Private)
	if r.code != 0 {
		t.Fatalf("record-merge of the approved move:\n%s", r)
	}
	if l := orgLine(t, ci, d); !strings.HasPrefix(l, "org: ") {
		t.Fatalf("the bridge's entry names no organisation policy version")
	}
	ci.git(d, "push", "-q", "origin", "refs/secure/rsl:refs/secure/rsl")
	fresh := ci.path("fresh")
	ci.git(ci.sb.Home, "clone", "-q", f.members["gh"], fresh)
	ci.git(fresh, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	if r := ci.run(fresh, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify of the bridge's entry in a fresh clone:\n%s", r)
	}
}

// Issue 19 item 2, done-when "a person removed from it loses access in
// both after their next fetch", for a revocation: the organisation
// revokes bob's key (trust revoke-key) without removing bob; after his
// next fetch his client refuses to sign in both repositories, and an
// entry he signs with his own tools naming the organisation's latest
// version is refused by both servers, naming the revocation; alice keeps
// her access.
func TestOrgKeyRevocation(t *testing.T) {
	f := newOrgFixture(t, true, nil, "app1", "app2")
	names := []string{"app1", "app2"}
	bobs, alices := map[string]string{}, map[string]string{}
	for _, name := range names {
		bobs[name], alices[name] = f.clone(f.bob, name, name), f.clone(f.alice, name, name)
		f.bob.commit(bobs[name], "bob.txt", "1\n")
		if r := f.bob.run(bobs[name], "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("bob's push to %s before the revocation:\n%s", name, r)
		}
	}

	// The organisation revokes bob's key from its next entry on; bob stays
	// a person of it (and its rule still names him).
	next := strings.TrimSpace(f.olga.git(f.orgDir, "rev-list", "--count", "refs/secure/rsl"))
	n, _ := strconv.Atoi(next)
	f.olga.secure(f.orgDir, "trust", "revoke-key", f.bob.key.Public, "--from-entry", strconv.Itoa(n+1))
	f.olga.secure(f.orgDir, "policy", "apply")
	f.olga.git(f.orgDir, "push", "-q", "origin", "main")
	latest := rsl.OrgVersion{Number: uint64(n + 1), ID: hash(t, f.srv.admin.rev(f.orgPath, "refs/secure/rsl"))}

	for _, name := range names {
		d := bobs[name]
		f.bob.git(d, "pull", "-q")
		old := f.bob.rev(d, "HEAD")
		c := f.bob.commit(d, "bob.txt", "2\n")
		r := f.bob.run(d, "git", "push", "origin", "main")
		if r.code == 0 || !strings.Contains(r.stderr, "is revoked by the organisation policy") {
			t.Fatalf("bob, whose key the organisation revoked, pushed to %s:\n%s", name, r)
		}
		// bob's own tools: an entry naming the latest version, pushed
		// past git-remote-secure.
		tip := forge(t, f.bob, d, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, old), New: hash(t, c), Org: &latest})
		r = f.bob.pushDirect(d, f.members[name], "--no-verify", "--atomic", f.members[name], "main", tip+":refs/secure/rsl")
		want := fmt.Sprintf("a key the organisation policy version %d revokes", latest.Number)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("%s's server took bob's entry signed with the revoked key (want %q):\n%s", name, want, r)
		}
		a := alices[name]
		f.alice.git(a, "pull", "-q")
		f.alice.commit(a, "alice.txt", "1\n")
		if r := f.alice.run(a, "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("alice's push to %s after bob's revocation:\n%s", name, r)
		}
		if r := f.alice.run(a, "git", "secure", "verify"); r.code != 0 {
			t.Fatalf("verify of %s after bob's revocation:\n%s", name, r)
		}
	}
}

// Issue 19 item 2: the verification checkpoint remembers the newest
// organisation policy version the log named, so that a verification that
// starts from it still refuses an entry naming an older version (bob,
// removed by the organisation, signs an entry under the version that
// still listed him and pushes it where no hook guards), and still
// detects the organisation's rollback when no entry follows and the
// organisation cache is gone.
func TestOrgCheckpointRemembersVersion(t *testing.T) {
	f := newOrgFixture(t, false, nil, "app1")
	bd, ad := f.clone(f.bob, "app1", "bob"), f.clone(f.alice, "app1", "alice")
	f.bob.commit(bd, "bob.txt", "1\n")
	f.bob.git(bd, "push", "-q", "origin", "main")
	old := rsl.OrgVersion{}
	if fields := strings.Fields(orgLine(t, f.bob, bd)); len(fields) == 3 {
		n, _ := strconv.Atoi(fields[1])
		old = rsl.OrgVersion{Number: uint64(n), ID: hash(t, fields[2])}
	} else {
		t.Fatalf("bob's entry names no organisation version")
	}
	withBob := map[string]string{}
	for _, ref := range []string{"refs/secure/rsl", "refs/secure/policy"} {
		withBob[ref] = f.srv.admin.rev(f.orgPath, ref)
	}

	// The organisation removes bob; alice records an entry under the new
	// version and verifies: her checkpoint is at that entry.
	f.olga.secure(f.orgDir, "policy", "remove-rule", "org-main")
	f.olga.secure(f.orgDir, "policy", "add-rule", "org-main", "--ref", "refs/heads/main", "--allow", "alice")
	f.olga.secure(f.orgDir, "policy", "remove-person", "bob")
	f.olga.secure(f.orgDir, "policy", "apply")
	f.olga.git(f.orgDir, "push", "-q", "origin", "main")
	f.alice.git(ad, "pull", "-q")
	f.alice.commit(ad, "alice.txt", "1\n")
	f.alice.git(ad, "push", "-q", "origin", "main")
	if r := f.alice.run(ad, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("alice's verify:\n%s", r)
	}
	cp := readFile(t, ad+"/.git/secure/checkpoint.json")
	if !strings.Contains(cp, `"org":{"url":"`+f.orgURL+`"`) {
		t.Fatalf("the checkpoint does not name the organisation version:\n%s", cp)
	}

	// bob's entry under the old version, on a server with no hook.
	f.bob.git(bd, "fetch", "-q")
	f.bob.git(bd, "reset", "-q", "--hard", "origin/main")
	base := f.bob.rev(bd, "HEAD")
	c := f.bob.commit(bd, "bob.txt", "2\n")
	tip := forge(t, f.bob, bd, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, base), New: hash(t, c), Org: &old})
	if r := f.bob.pushDirect(bd, f.members["app1"], "--no-verify", "--atomic", f.members["app1"], "main", tip+":refs/secure/rsl"); r.code != 0 {
		t.Fatalf("bob's direct push to the unguarded server:\n%s", r)
	}
	want := fmt.Sprintf("the entry names organisation policy version %d", old.Number)
	r := f.alice.run(ad, "git", "fetch", "origin")
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("alice's fetch (from her checkpoint) of bob's entry under an older organisation version (want %q):\n%s", want, r)
	}

	// The organisation's server is put back to the snapshot that lists
	// bob, and alice's organisation cache is lost: her checkpoint still
	// names the newer version, which the organisation's log lacks.
	for ref, h := range withBob {
		f.srv.admin.git(f.orgPath, "-c", "core.hooksPath=/dev/null", "update-ref", ref, h)
	}
	if err := os.RemoveAll(ad + "/.git/secure/org"); err != nil {
		t.Fatal(err)
	}
	r = f.alice.run(ad, "git", "secure", "verify")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "no such organisation policy version") {
		t.Fatalf("verify from the checkpoint after the organisation's rollback:\n%s", r)
	}
}
