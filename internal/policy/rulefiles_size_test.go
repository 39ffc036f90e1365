package policy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// Attack (availability): anyone who can push may put a staged policy
// change on a server (refs/secure/policy-staging), and every clone
// fetches it; the server loads it to decide whether a later staged change
// may replace it, and every policy command loads it. Its rules/ directory
// held up to 1000 entries of up to 1 MiB each, all read into memory before
// any was checked: 1000 entries naming one 1 MiB blob (a push of a few
// kilobytes) made every reader allocate a gigabyte. Now the entries of
// rules/ must be distinct blobs (each file names itself, so two can never
// be the same valid file), and all rule files together hold at most
// MaxRuleFilesSize bytes; the reader stops at the first one over, before
// reading the rest.
func TestLoadBoundsRuleFiles(t *testing.T) {
	sb := testutil.NewSandbox(t)
	dir := sb.InitRepo("repo", 1)
	g, err := gitrepo.OpenWithEnv(dir, sb.Environ())
	must(t, err)
	t.Cleanup(func() { _ = g.Close() })
	f := newFixture(t)
	base, err := Save(g, f.p, gitrepo.ZeroHash, testWho, "policy")
	must(t, err)
	bc, err := g.ReadCommit(base)
	must(t, err)
	top, err := g.ReadTree(bc.Tree)
	must(t, err)

	// policyWith commits base's files plus rules/ holding one entry per
	// blob, named team00.json, team01.json, ...
	policyWith := func(blobs []gitrepo.Hash) gitrepo.Hash {
		t.Helper()
		var rules []gitrepo.TreeEntry
		for i, b := range blobs {
			rules = append(rules, gitrepo.TreeEntry{Mode: 0o100644, Name: fmt.Sprintf("team%02d.json", i), Hash: b})
		}
		rt, err := g.WriteTree(rules)
		must(t, err)
		tree, err := g.WriteTree(append(append([]gitrepo.TreeEntry{}, top...), gitrepo.TreeEntry{Mode: 0o040000, Name: RulesDir, Hash: rt}))
		must(t, err)
		out := sb.Git(dir, "commit-tree", tree.String(), "-p", base.String(), "-m", "staged")
		h, err := gitrepo.ParseHash(strings.TrimSpace(out))
		must(t, err)
		return h
	}
	blob := func(seed string) gitrepo.Hash {
		t.Helper()
		data := append([]byte(seed), bytes.Repeat([]byte(" "), MaxFileSize-len(seed))...)
		h, err := g.WriteObject("blob", data)
		must(t, err)
		return h
	}

	one := blob("{}")
	same := make([]gitrepo.Hash, 40)
	for i := range same {
		same[i] = one
	}
	start := time.Now()
	_, err = Load(g, policyWith(same))
	if err == nil || !strings.Contains(err.Error(), "rules/team01.json is the same blob as rules/team00.json") {
		t.Errorf("40 rule files naming one blob: %v", err)
	}
	var distinct []gitrepo.Hash
	for i := 0; i <= MaxRuleFilesSize/MaxFileSize; i++ {
		distinct = append(distinct, blob(fmt.Sprintf("{%d}", i)))
	}
	_, err = Load(g, policyWith(distinct))
	want := fmt.Sprintf("its rule files hold more than %d bytes together (rules/team%02d.json is beyond)", MaxRuleFilesSize, MaxRuleFilesSize/MaxFileSize)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d distinct rule files of 1 MiB: %v, want %q", len(distinct), err, want)
	}
	t.Logf("both refused in %v", time.Since(start))
}
