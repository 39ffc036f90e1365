package explaincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/clitest"
	"golang.org/x/crypto/ssh"
)

// TestRunExplain: explain of a ref nothing protects is satisfied (exit 0)
// in text and JSON; before init it says the one "not set up".
func TestRunExplain(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	if e, ok := report.As(runExplain(ctx, &Options{F: r.F(), Ref: "main"})); !ok || e.Msg != factory.NotSetUp {
		t.Errorf("explain before init: %v, want %q", e, factory.NotSetUp)
	}
	r.Init()
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "explain", r.Stdout.String(), "refs/heads/main: recorded at", "(entry #2)",
		"no rule protects refs/heads/main", "result: satisfied")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", JSON: true}); err != nil {
		t.Fatal(err)
	}
	var x struct {
		Ref       string `json:"ref"`
		Satisfied bool   `json:"satisfied"`
	}
	if err := json.Unmarshal(r.Stdout.Bytes(), &x); err != nil || x.Ref != "refs/heads/main" || !x.Satisfied {
		t.Errorf("explain --json: %+v, %v\n%s", x, err, r.Stdout)
	}
}

// TestExplainNamesSignedPushAndTreeApprovals: a rule that needs a signed
// push or lets tree-bound approvals count says so in explain's text and
// JSON, and a pending update under it notes that the push must be signed.
func TestExplainNamesSignedPushAndTreeApprovals(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	r.Init()
	p, err := r.F().Repo()
	if err != nil {
		t.Fatal(err)
	}
	rule := policy.Rule{Name: "protect-main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice"}, Threshold: 1, TreeApprovals: true, SignedPush: true}
	data, err := os.ReadFile(r.Pub("alice"))
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stage("test", func(staged, base *policy.Policy, now time.Time) error {
		if err := staged.AddPerson(base, "alice", []ssh.PublicKey{pub}, now); err != nil {
			return err
		}
		return staged.AddRule(base, rule, now)
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Apply(r.Priv("alice")); err != nil {
		t.Fatal(err)
	}
	r.Git("commit", "--allow-empty", "-q", "-m", "pending")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "explain", r.Stdout.String(), "tree-bound approvals count", "pushed with git push --signed",
		"rule protect-main also needs the update pushed with a push certificate")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice"), JSON: true}); err != nil {
		t.Fatal(err)
	}
	var x struct {
		Rules []struct {
			Name          string `json:"name"`
			TreeApprovals bool   `json:"treeApprovals"`
			SignedPush    bool   `json:"requireSignedPush"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(r.Stdout.Bytes(), &x); err != nil || len(x.Rules) != 1 || !x.Rules[0].TreeApprovals || !x.Rules[0].SignedPush {
		t.Errorf("explain --json: %+v, %v\n%s", x, err, r.Stdout)
	}
}

// TestExplainCountsFilesOfTreeBomb: a pending update that adds a tree bomb
// (331 776 files, 60 MB as a list) under a path rule's patterns is judged
// without listing it: explain names the first protected files and says
// how many more there are, in text and JSON.
func TestExplainCountsFilesOfTreeBomb(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	r.Init()
	p, err := r.F().Repo()
	if err != nil {
		t.Fatal(err)
	}
	rule := policy.Rule{Name: "keys", Refs: []string{"refs/heads/main"}, Paths: []string{"**/*.key"}, Allow: []string{"alice"}, Threshold: 1}
	data, err := os.ReadFile(r.Pub("alice"))
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stage("test", func(staged, base *policy.Policy, now time.Time) error {
		if err := staged.AddPerson(base, "alice", []ssh.PublicKey{pub}, now); err != nil {
			return err
		}
		return staged.AddRule(base, rule, now)
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Apply(r.Priv("alice")); err != nil {
		t.Fatal(err)
	}
	child, err := p.Git.WriteObject("blob", []byte("k\n"))
	if err != nil {
		t.Fatal(err)
	}
	mode := uint32(gitrepo.ModeFile)
	for lvl := range 4 {
		var ents []gitrepo.TreeEntry
		for i := range 24 {
			ents = append(ents, gitrepo.TreeEntry{Mode: mode, Name: fmt.Sprintf("%02d", i) + strings.Repeat(string(rune('a'+lvl)), 34) + ".key", Hash: child})
		}
		if child, err = p.Git.WriteTree(ents); err != nil {
			t.Fatal(err)
		}
		mode = gitrepo.ModeTree
	}
	commit := r.Git("commit-tree", child.String(), "-p", "HEAD", "-m", "bomb")
	r.Git("update-ref", "refs/heads/main", commit)
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	first := "00" + strings.Repeat("d", 34) + ".key/00" + strings.Repeat("c", 34) + ".key/00" + strings.Repeat("b", 34) + ".key/00" + strings.Repeat("a", 34) + ".key"
	clitest.Contains(t, "explain", r.Stdout.String(), "protected files changed: "+first, " and 331771 more")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice"), JSON: true}); err != nil {
		t.Fatal(err)
	}
	var x struct {
		Rules []struct {
			Files     []string `json:"files"`
			MoreFiles int      `json:"moreFiles"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(r.Stdout.Bytes(), &x); err != nil || len(x.Rules) != 1 || len(x.Rules[0].Files) != 5 || x.Rules[0].Files[0] != first || x.Rules[0].MoreFiles != 331771 {
		t.Errorf("explain --json: %+v, %v", x, err)
	}
}
