package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shallowServer is a server repository whose main is protected, with a
// folder rule on doc/** and three recorded pushes that touch doc/ (entries
// #5 to #7), as a CI system clones it. It returns the URL and the server
// repository's path.
func shallowServer(t *testing.T) (string, string, *server) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("s.git", true)
	srv.admin.git(path, "config", "uploadpack.allowFilter", "true")
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "work", url, true)
	// alice may move main but not change doc/ (carol's): the server
	// accepts her moves for their diffs, which touch only src/. A clone
	// without the states before them cannot show that; with the states
	// present it can (a signer the rule allows would meet it whatever
	// changed, and need no diff).
	carol := newUser(t, "carol")
	u.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public)
	u.secure(dir, "policy", "add-rule", "docs", "--ref", "refs/heads/main", "--path", "doc/**", "--allow", "carol")
	u.secure(dir, "policy", "apply")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		u.commit(dir, "src/f.txt", string(rune('a'+i))+"\n")
		u.git(dir, "push", "-q", "origin", "main")
	}
	return url, path, srv
}

// Issue 15 item 9: a shallow clone (git clone --depth 1) fetches the log
// whole, and verification fails closed naming each check it could not
// make (the folder rule on the moves whose old commit lies beyond the
// boundary); --allow-shallow passes with a warning naming each skipped
// check, saves no checkpoint, and a full clone then checks them all.
func TestShallowCloneAllowShallow(t *testing.T) {
	url, path, srv := shallowServer(t)
	bob := newUser(t, "bob")
	d := bob.path("c")
	bob.git(bob.sb.Home, "clone", "-q", "--depth", "1", url, d)
	bob.git(d, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	if got, want := bob.git(d, "rev-list", "--count", "refs/secure/rsl"), srv.admin.git(path, "rev-list", "--count", "refs/secure/rsl"); got != want {
		t.Fatalf("the shallow clone has %s log entries, the server %s: the log was not fetched whole", got, want)
	}

	r := bob.run(d, "git", "secure", "verify")
	if r.code != 1 || !containsAll(r.stderr, "this clone is shallow") || !strings.Contains(r.stderr, "entry #7") ||
		!strings.Contains(r.stderr, "rule docs: missing object") || !strings.Contains(r.stderr, "git secure verify --allow-shallow") {
		t.Fatalf("verify of a shallow clone must fail, naming the checks it could not make:\n%s", r)
	}
	if strings.Contains(r.stderr, "error: : ") || strings.Contains(r.stderr, "is listed") {
		t.Errorf("the shallow clone's problem has an empty subject or says checks are listed:\n%s", r)
	}
	r = bob.run(d, "git", "secure", "verify", "--allow-shallow")
	if r.code != 0 {
		t.Fatalf("verify --allow-shallow:\n%s", r)
	}
	for _, want := range []string{
		"not checked (shallow clone, --allow-shallow): entry #5", "entry #6", "entry #7",
		"rule docs", "3 check(s) listed above were NOT made",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("verify --allow-shallow does not say %q:\n%s", want, r)
		}
	}
	// Nothing skipped was taken for checked: after --unshallow every entry
	// is checked again, none from a checkpoint.
	bob.git(d, "fetch", "-q", "--unshallow", "origin")
	r = bob.run(d, "git", "secure", "verify")
	if r.code != 0 || strings.Contains(r.stdout, "0 new since the last verification") || strings.Contains(r.stderr, "not checked") {
		t.Fatalf("verify after git fetch --unshallow:\n%s", r)
	}
}

// Issue 15 item 9: a log fetched with a depth (git fetch --depth 1 origin
// 'refs/secure/*:refs/secure/*') was reported as "malformed metadata ...
// the log was rewritten or damaged"; it still fails, but says the log was
// cut short by the shallow fetch and how to fetch it whole, and following
// the hint works.
func TestShallowMetadataFetch(t *testing.T) {
	url, _, _ := shallowServer(t)
	bob := newUser(t, "bob")
	d := bob.path("c")
	bob.git(bob.sb.Home, "clone", "-q", "--depth", "1", url, d)
	bob.git(d, "fetch", "-q", "--depth", "1", "origin", "refs/secure/*:refs/secure/*")
	r := bob.run(d, "git", "secure", "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "the log was probably fetched with a depth") || !strings.Contains(r.stderr, "git fetch --unshallow origin") ||
		strings.Contains(r.stderr, "rewritten or damaged") {
		t.Fatalf("verify of a log fetched shallow:\n%s", r)
	}
	bob.git(d, "fetch", "-q", "--unshallow", "origin")
	if r := bob.run(d, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify after following the hint:\n%s", r)
	}
}

// Issue 15 item 9: a partial clone (--filter=blob:none, as CI systems
// make) verifies, with the in-process object readers and without them:
// what verification reads and the clone lacks, git fetches from the
// promisor remote.
func TestPartialCloneVerify(t *testing.T) {
	url, _, _ := shallowServer(t)
	for _, inproc := range []bool{true, false} {
		bob := newUser(t, "bob")
		if !inproc {
			bob.sb.Extra = append(bob.sb.Extra, "GIT_SECURE_NO_INPROCESS=1")
		}
		d := bob.path("c")
		bob.git(bob.sb.Home, "clone", "-q", "--filter=blob:none", url, d)
		if bob.git(d, "config", "remote.origin.promisor") != "true" {
			t.Fatal("not a partial clone")
		}
		bob.git(d, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
		if r := bob.run(d, "git", "secure", "verify", "--full"); r.code != 0 || strings.Contains(r.stderr, "not checked") {
			t.Fatalf("verify of a partial clone (in-process readers %v):\n%s", inproc, r)
		}
	}
}

// Issue 15 item 9: a shallow clone routed through git-remote-secure
// (hooks install after git clone --depth 1) refuses to fetch by default,
// naming the shallow clone; with secure.allowShallow its fetches verify
// what they can and name each check not made.
func TestShallowCloneFetchThroughHelper(t *testing.T) {
	url, _, _ := shallowServer(t)
	bob := newUser(t, "bob")
	d := bob.path("c")
	bob.git(bob.sb.Home, "clone", "-q", "--depth", "1", url, d)
	bob.configure(d)
	bob.secure(d, "hooks", "install")
	r := bob.run(d, "git", "fetch", "origin")
	if r.code == 0 || !strings.Contains(r.stderr, "this clone is shallow") || !strings.Contains(r.stderr, "secure.allowShallow") {
		t.Fatalf("fetch through the helper in a shallow clone must fail naming it:\n%s", r)
	}
	bob.git(d, "config", "secure.allowShallow", "true")
	r = bob.run(d, "git", "fetch", "origin")
	if r.code != 0 || !strings.Contains(r.stderr, "not checked (shallow clone, --allow-shallow): entry #7") {
		t.Fatalf("fetch with secure.allowShallow:\n%s", r)
	}
	if bob.refValue(d, "refs/secure/rsl") == "" {
		t.Fatal("the fetch did not bring the log")
	}
}

// Issue 15 item 9: git clone --filter=blob:none through git-remote-secure
// is a verified clone of every object, and says once per remote that it
// ignored the filter (a partial clone's later fetches each ask for it).
func TestFilterThroughHelper(t *testing.T) {
	url, _, _ := shallowServer(t)
	bob := newUser(t, "bob")
	d := bob.path("c")
	r := bob.run(bob.sb.Home, "git", "clone", "--filter=blob:none", "secure::"+url, d)
	if r.code != 0 || !strings.Contains(r.stderr, "note: --filter=blob:none ignored") {
		t.Fatalf("clone --filter through the helper:\n%s", r)
	}
	if bob.refValue(d, "refs/secure/rsl") == "" {
		t.Fatal("the clone did not bring the log")
	}
	if missing := bob.git(d, "rev-list", "--objects", "--missing=print", "--all"); strings.Contains(missing, "\n?") || strings.HasPrefix(missing, "?") {
		t.Fatalf("objects missing after a clone through the helper:\n%s", missing)
	}
	r = bob.run(d, "git", "fetch", "origin")
	if r.code != 0 || strings.Contains(r.stderr, "--filter") {
		t.Fatalf("a second fetch repeats the note or fails:\n%s", r)
	}
	if r := bob.run(d, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify after the clone:\n%s", r)
	}
}
