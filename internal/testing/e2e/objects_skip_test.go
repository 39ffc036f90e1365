package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// cryptoWorld is a project on an enforcing server: alice (the security
// team) may change main and src/crypto/**, bob only main. alice recorded
// src/crypto/aes.c as "vulnerable" (vuln), then fixed it (fix, main's tip).
type cryptoWorld struct {
	srv              *server
	repo, url        string
	alice, bob       *user
	aliceDir, bobDir string
	vuln, fix        string
}

func newCryptoWorld(t *testing.T, noForcePush bool) *cryptoWorld {
	t.Helper()
	w := &cryptoWorld{srv: startServer(t, trFile), alice: newUser(t, "alice"), bob: newUser(t, "bob")}
	w.repo, w.url = w.srv.newRepo("crypto.git", true)
	a, dir := w.alice, w.alice.sb.InitRepo("alice", 2)
	w.aliceDir = dir
	a.configure(dir)
	a.git(dir, "remote", "add", "origin", w.url)
	a.secure(dir, "init")
	a.secure(dir, "policy", "add-person", "alice", "--key", a.key.Public)
	a.secure(dir, "policy", "add-person", "bob", "--key", w.bob.key.Public)
	a.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	a.secure(dir, "policy", "add-rule", "crypto", "--ref", "refs/heads/main", "--path", "src/crypto/**", "--allow", "alice")
	if noForcePush {
		a.secure(dir, "policy", "add-global-rule", "linear-main", "--no-force-push", "--ref", "refs/heads/main")
	}
	a.secure(dir, "policy", "apply")
	if err := os.MkdirAll(filepath.Join(dir, "src", "crypto"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.vuln = a.commit(dir, "src/crypto/aes.c", "vulnerable\n")
	a.git(dir, "push", "-q", "-u", "origin", "main")
	w.fix = a.commit(dir, "src/crypto/aes.c", "fixed\n")
	a.git(dir, "push", "-q", "origin", "main")

	b := w.bob
	w.bobDir = b.path("bob")
	b.git(b.sb.Home, "clone", "-q", w.url, w.bobDir)
	b.configure(w.bobDir)
	b.secure(w.bobDir, "hooks", "install")
	b.git(w.bobDir, "fetch", "-q")
	if got := b.refValue(w.bobDir, "refs/secure/rsl"); got == "" || got != w.srv.admin.refs(w.repo)["refs/secure/rsl"] {
		t.Fatalf("bob's clone did not get the log")
	}
	return w
}

// forge appends entries signed with u's own key to the log of u's clone
// (what an attacker with their own tools writes; numbers are filled in)
// and returns the new tip. The clone's refs are not moved.
func forge(t *testing.T, u *user, dir string, entries ...*rsl.Entry) string {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(dir, u.sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tip, _, err := g.ResolveRef(rsl.Ref)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	last, err := rsl.FromCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.LoadSigner(sign.KeySpec{File: u.key.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	who := gitrepo.Ident{Name: u.name, Email: u.name + "@example.com", When: time.Now().Truncate(time.Second)}
	n := last.Number
	for _, e := range entries {
		n++
		e.Number = n
		tip, err = rsl.Write(g, e, tip, who, func(p []byte) ([]byte, error) { return sign.SignSSHSig(s, p, sign.NamespaceGit) })
		if err != nil {
			t.Fatal(err)
		}
	}
	return tip.String()
}

func hash(t *testing.T, s string) gitrepo.Hash {
	t.Helper()
	h, err := gitrepo.ParseHash(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// attackPush pushes main and the log straight to url (plain git, around
// bob's helper and hooks), atomically, and returns what happened.
func (w *cryptoWorld) attackPush(url, main, log string) result {
	return w.bob.pushDirect(w.bobDir, url, "--no-verify", "--atomic", "--force", url,
		main+":refs/heads/main", log+":refs/secure/rsl")
}

// verifyFreshClone mirrors url into a new directory and runs git secure
// verify --full there.
func (w *cryptoWorld) verifyFreshClone(t *testing.T, url string) result {
	t.Helper()
	auditor := newUser(t, "auditor")
	dir := filepath.Join(t.TempDir(), "fresh.git")
	auditor.git(auditor.sb.Home, "clone", "-q", "--mirror", url, dir)
	return auditor.run(dir, "git", "secure", "verify", "--full")
}

// plainCopy makes a server repository without git-secure's hook holding
// everything the enforcing one has (as a mirror of it would): what the
// attack does there is what a clone of a server that let it through sees.
func (w *cryptoWorld) plainCopy(t *testing.T) string {
	t.Helper()
	_, url := w.srv.newRepo("plain.git", false)
	w.srv.admin.git(w.repo, "push", "-q", "--mirror", url)
	return url
}

// TestOddTreeModeDoesNotSwitchChecksOff (issue 13, hole 1): bob, allowed
// on main but not on src/crypto/**, rewrites main (no-force-push) to a
// commit E that drops alice's fix and changes src/crypto/aes.c, behind a
// tree entry of mode 100664 (git reads it as 100644), recorded by an entry
// for E and one for F (E's child, same tree). Before the fix, the tree did
// not parse, the failure counted as a missing object, the remaining and
// global rules were not checked, and E's "missing object" was forgiven
// because F superseded it: the server and a fresh clone accepted.
func TestOddTreeModeDoesNotSwitchChecksOff(t *testing.T) {
	t.Parallel()
	w := newCryptoWorld(t, true)
	b, dir := w.bob, w.bobDir
	plain := w.plainCopy(t)

	// E: the vulnerable commit's tree, with src/crypto/aes.c changed and
	// written with the old mode 100664.
	evil := strings.TrimSpace(b.runStdin(dir, []byte("backdoor\n"), "git", "hash-object", "-w", "--stdin").stdout)
	eh := hash(t, evil)
	raw := append([]byte("100664 aes.c\x00"), eh[:]...)
	crypto := strings.TrimSpace(b.runStdin(dir, raw, "git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin").stdout)
	if ls := b.git(dir, "ls-tree", crypto); !strings.HasPrefix(ls, "100644 blob "+evil) {
		t.Fatalf("git must read mode 100664 as a plain file: %q", ls)
	}
	srcTree := strings.TrimSpace(b.runStdin(dir, []byte("040000 tree "+crypto+"\tcrypto\n"), "git", "mktree").stdout)
	var root strings.Builder
	for _, line := range strings.Split(b.git(dir, "ls-tree", w.vuln+"^{tree}"), "\n") {
		if strings.HasSuffix(line, "\tsrc") {
			line = "040000 tree " + srcTree + "\tsrc"
		}
		root.WriteString(line + "\n")
	}
	rootTree := strings.TrimSpace(b.runStdin(dir, []byte(root.String()), "git", "mktree").stdout)
	e := b.git(dir, "commit-tree", rootTree, "-p", w.vuln, "-m", "tidy up")
	f := b.git(dir, "commit-tree", rootTree, "-p", e, "-m", "follow-up")
	log := forge(t, b, dir,
		&rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, w.fix), New: hash(t, e)},
		&rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, e), New: hash(t, f)})

	// The enforcing server refuses, and says the global rule E breaks;
	// with that rule failing, the path rule's diff is not computed
	// (notes/attacks 04: a refused entry must not cost a diff).
	r := w.attackPush(w.url, f, log)
	if r.code == 0 {
		t.Fatalf("the server accepted bob's rewrite of main behind a 100664 tree:\n%s", r)
	}
	for _, want := range []string{"linear-main", "may only fast-forward", "path rule crypto not checked"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the server's refusal does not mention %q:\n%s", want, r)
		}
	}
	if got := w.srv.admin.refs(w.repo)["refs/heads/main"]; got != w.fix {
		t.Fatalf("server main moved to %s", got)
	}
	// The same tree on top of the fix (a fast-forward): the path rule is
	// judged, through the 100664 entry.
	ff := b.git(dir, "commit-tree", rootTree, "-p", w.fix, "-m", "tidy up on top")
	r = w.attackPush(w.url, ff, forge(t, b, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, w.fix), New: hash(t, ff)}))
	if r.code == 0 {
		t.Fatalf("the server accepted bob's change of src/crypto behind a 100664 tree:\n%s", r)
	}
	for _, want := range []string{"rule crypto", "src/crypto/aes.c", "bob is not allowed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the server's refusal of the fast-forward does not mention %q:\n%s", want, r)
		}
	}

	// Where nothing refused it, a fresh clone's verification fails, for
	// the same reasons.
	if r := w.attackPush(plain, f, log); r.code != 0 {
		t.Fatalf("push to the plain server:\n%s", r)
	}
	r = w.verifyFreshClone(t, plain)
	if r.code != 1 {
		t.Fatalf("git secure verify --full in a fresh clone of the attacked repository: want exit 1:\n%s", r)
	}
	for _, want := range []string{"path rule crypto not checked", "linear-main"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("verify in a fresh clone does not mention %q:\n%s", want, r)
		}
	}
}

// TestSkipNeedsPathRules (issue 13, hole 2): bob, allowed on main but not
// on src/crypto/**, signs an annotation skipping alice's fix and moves main
// back to the vulnerable commit. Before the fix, the skip was authorized
// with path rules off: the server and a fresh clone accepted. alice, whom
// every rule allows, can still skip her own entry.
func TestSkipNeedsPathRules(t *testing.T) {
	t.Parallel()
	w := newCryptoWorld(t, false)
	b, dir := w.bob, w.bobDir
	plain := w.plainCopy(t)
	entries := b.rslLog(dir)
	last := entries[len(entries)-1]
	if last.Ref != "refs/heads/main" || last.New != w.fix {
		t.Fatalf("the log's last entry is %+v, want alice's fix", last)
	}

	// The command refuses to sign it.
	r := b.run(dir, "git", "secure", "rsl", "skip", strconv.FormatUint(last.Number, 10), "--reason", "revert")
	if r.code != 1 || !strings.Contains(r.stderr, "rule crypto") || !strings.Contains(r.stderr, "cannot sign for it") {
		t.Fatalf("rsl skip by bob: want a refusal naming rule crypto:\n%s", r)
	}
	if got := b.refValue(dir, "refs/secure/rsl"); got != w.srv.admin.refs(w.repo)["refs/secure/rsl"] {
		t.Fatalf("a refused skip moved bob's log")
	}

	// Forged with his own tools, the server refuses it.
	log := forge(t, b, dir, &rsl.Entry{Type: rsl.TypeAnnotation, Reason: "revert",
		Skips: []rsl.Skip{{Number: last.Number, ID: hash(t, last.ID)}}})
	r = w.attackPush(w.url, w.vuln, log)
	if r.code == 0 {
		t.Fatalf("the server accepted bob's skip of alice's fix:\n%s", r)
	}
	for _, want := range []string{"rule crypto", "src/crypto/aes.c", "bob is not allowed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the server's refusal does not mention %q:\n%s", want, r)
		}
	}
	if got := w.srv.admin.refs(w.repo)["refs/heads/main"]; got != w.fix {
		t.Fatalf("server main moved to %s", got)
	}
	// A fresh clone of a server that let it through fails verification
	// (the fix's commit is not in it: every path rule applies).
	if r := w.attackPush(plain, w.vuln, log); r.code != 0 {
		t.Fatalf("push to the plain server:\n%s", r)
	}
	r = w.verifyFreshClone(t, plain)
	if r.code != 1 || !strings.Contains(r.stderr, "rule crypto") || !strings.Contains(r.stderr, "bob is not allowed") {
		t.Fatalf("git secure verify --full in a fresh clone after bob's skip: want exit 1 naming rule crypto:\n%s", r)
	}

	// alice's skip of the same entry is authorized, end to end.
	a, adir := w.alice, w.aliceDir
	a.secure(adir, "rsl", "skip", strconv.FormatUint(last.Number, 10), "--reason", "the fix broke the build")
	a.git(adir, "reset", "-q", "--hard", w.vuln)
	if r := a.run(adir, "git", "push", "--force", "origin", "main"); r.code != 0 {
		t.Fatalf("alice's authorized skip and push back:\n%s", r)
	}
	if got := w.srv.admin.refs(w.repo)["refs/heads/main"]; got != w.vuln {
		t.Fatalf("server main = %s after alice's skip, want %s", got, w.vuln)
	}
	if r := w.verifyFreshClone(t, w.url); r.code != 0 {
		t.Fatalf("verify in a fresh clone after alice's skip:\n%s", r)
	}
}
