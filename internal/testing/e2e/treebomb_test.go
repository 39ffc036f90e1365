package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/rsl"
)

// mkBomb writes, in dir, main's tree plus a directory bomb/ of four levels
// of 31 entries with 100-byte names, every entry of a level naming the next
// level's one tree (15 KiB of trees, 923 521 paths of 400 bytes), and
// returns a commit of it on main.
func mkBomb(t *testing.T, u *user, dir string) string {
	t.Helper()
	child, typ, mode := strings.TrimSpace(string(u.runStdin(dir, []byte("x\n"), "git", "hash-object", "-w", "--stdin").stdout)), "blob", "100644"
	for lvl := range 4 {
		var b strings.Builder
		for i := range 31 {
			fmt.Fprintf(&b, "%s %s %s\t%02d%s\n", mode, typ, child, i, strings.Repeat(string(rune('a'+lvl)), 98))
		}
		r := u.runStdin(dir, []byte(b.String()), "git", "mktree")
		if r.code != 0 {
			t.Fatal(r)
		}
		child, typ, mode = r.stdout, "tree", "040000"
	}
	top := u.git(dir, "ls-tree", "main") + "\n040000 tree " + child + "\tbomb\n"
	r := u.runStdin(dir, []byte(top), "git", "mktree")
	if r.code != 0 {
		t.Fatal(r)
	}
	return u.git(dir, "commit-tree", r.stdout, "-p", "main", "-m", "bomb")
}

// TestServerTreeBomb (notes/attacks 01 and 04): mallory, allowed on dev
// alone, pushes with entries she signs herself (plain git, no helper) a
// tree bomb: on main, where she may not move the ref, the server refuses
// without a diff (the path rule is named as not checked); on dev, where
// nothing under src/crypto changes, it accepts, and the server's
// verify --full reads a handful of trees for it (bomb/ is skipped), not
// 923 521 paths.
func TestServerTreeBomb(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("bomb.git", true)
	alice, bob, mallory := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")

	aliceDir := alice.sb.InitRepo("alice", 1)
	alice.configure(aliceDir)
	writeFile(t, aliceDir, "src/crypto/aes.c", "reviewed\n")
	alice.git(aliceDir, "add", "--", "src/crypto/aes.c")
	alice.git(aliceDir, "commit", "-q", "-m", "aes")
	alice.git(aliceDir, "remote", "add", "origin", url)
	alice.secure(aliceDir, "init")
	for _, u := range []*user{alice, bob, mallory} {
		alice.secure(aliceDir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	alice.secure(aliceDir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	alice.secure(aliceDir, "policy", "add-rule", "dev", "--ref", "refs/heads/dev", "--allow", "mallory")
	alice.secure(aliceDir, "policy", "add-rule", "crypto", "--path", "src/crypto/**", "--allow", "alice")
	alice.secure(aliceDir, "policy", "apply")
	alice.git(aliceDir, "push", "-q", "-u", "origin", "main")

	dir := mallory.path("mallory")
	mallory.git(mallory.sb.Home, "clone", "-q", url, dir)
	mallory.configure(dir)
	mallory.git(dir, "fetch", "-q", url, "+refs/heads/main:refs/remotes/origin/main", "+refs/secure/*:refs/secure/*")
	bomb := mkBomb(t, mallory, dir)
	main := mallory.rev(dir, "refs/remotes/origin/main")

	// 04: main, which needs alice and bob.
	tip := mallory.rev(dir, "refs/secure/rsl")
	h := forge(t, mallory, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, main), New: hash(t, bomb)})
	mallory.git(dir, "update-ref", "refs/secure/rsl", h, tip)
	r := mallory.pushDirect(dir, url, "--atomic", "--no-verify", url, bomb+":refs/heads/main", "refs/secure/rsl:refs/secure/rsl")
	if r.code == 0 || !containsAll(r.stderr, "rule protect-main", "path rule crypto not checked") {
		t.Fatalf("mallory's bomb on main: want a refusal by protect-main, the path rule not checked:\n%s", r)
	}
	mallory.git(dir, "update-ref", "refs/secure/rsl", tip, h)

	// 01: dev, hers alone.
	h = forge(t, mallory, dir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/dev", New: hash(t, bomb)})
	mallory.git(dir, "update-ref", "refs/secure/rsl", h, tip)
	if r := mallory.pushDirect(dir, url, "--atomic", "--no-verify", url, bomb+":refs/heads/dev", "refs/secure/rsl:refs/secure/rsl"); r.code != 0 {
		t.Fatalf("mallory's bomb on dev, changing nothing under src/crypto, was refused:\n%s", r)
	}
	var out struct {
		Result struct {
			Diffs     int `json:"diffs"`
			DiffTrees int `json:"diffTrees"`
		} `json:"result"`
	}
	js := srv.admin.git(repo, "secure", "verify", "--full", "--json")
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, js)
	}
	if res := out.Result; res.Diffs == 0 || res.DiffTrees > 40 {
		t.Errorf("verify --full: %d diffs reading and walking %d trees; want the path rule judged over at most 40 trees", res.Diffs, res.DiffTrees)
	}
}
