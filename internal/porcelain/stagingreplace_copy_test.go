package porcelain

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
)

// copiedStaging is a bare repository with a policy in force (polTip: one
// root key that also holds the rules role, person bob, rule file docs
// that bob signed), signed staged changes of it, and copies of them that
// keep every signature and add junk no key signed.
type copiedStaging struct {
	g      *gitrepo.Repo
	polTip gitrepo.Hash
	// signed adds carol (targets.json signed by the root key); rootOnly
	// adds a root key (root.json signed, targets.json left as it is).
	signed, rootOnly gitrepo.Hash
	// edit1 is signed with a rule added to docs (which bob has not
	// signed again); edit2 is edit1 with one more: the proposer's own
	// edit of a file only someone else may sign, targets.json and its
	// signature unchanged.
	edit1, edit2 gitrepo.Hash
	// Copies of signed (of rootOnly for targets) with junk that passes
	// policy.CheckStaged but does not decode: root.json of 1 MiB, docs of
	// 1 MiB, 16 rule files of 1 MiB, targets.json of 4 MiB.
	junk map[string]gitrepo.Hash
}

func newCopiedStaging(t testing.TB) *copiedStaging {
	t.Helper()
	g, now, who := stagingRepo(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	key := func(name string) (ssh.Signer, ssh.PublicKey) { return stagingKey(t, name) }
	rootSigner, rootPub := key("root")
	rootTUF, err := sign.TUFSigner(rootSigner)
	must(err)
	bobSigner, bobPub := key("bob")
	bobTUF, err := sign.TUFSigner(bobSigner)
	must(err)
	_, carolPub := key("carol")
	_, root2Pub := key("root2")

	p0, err := policy.New(rootPub, now)
	must(err)
	base, err := p0.Clone()
	must(err)
	must(base.AddPerson(p0, "bob", []ssh.PublicKey{bobPub}, now))
	must(base.Delegate(p0, "", policy.Delegation{Name: "docs", Paths: []string{"docs/**"}, Signers: []string{"bob"}, Threshold: 1}, now))
	must(base.SignRoot(rootTUF))
	must(base.SignTargets(rootTUF))
	must(base.SignRuleFile("docs", bobTUF))
	h := &copiedStaging{g: g, junk: map[string]gitrepo.Hash{}}
	h.polTip, err = policy.Save(g, base, gitrepo.ZeroHash, who, "policy")
	must(err)
	stage := func(edit func(p *policy.Policy) error) (*policy.Policy, gitrepo.Hash) {
		t.Helper()
		p, err := base.Clone()
		must(err)
		must(edit(p))
		h, err := policy.Save(g, p, h.polTip, who, "staged")
		must(err)
		return p, h
	}
	signed, _ := stage(func(p *policy.Policy) error {
		if err := p.AddPerson(base, "carol", []ssh.PublicKey{carolPub}, now); err != nil {
			return err
		}
		return p.SignTargets(rootTUF)
	})
	h.signed, err = policy.Save(g, signed, h.polTip, who, "staged")
	must(err)
	rootOnly, _ := stage(func(p *policy.Policy) error {
		if err := p.AddRoleKey(base, "root", root2Pub, now); err != nil {
			return err
		}
		return p.SignRoot(rootTUF)
	})
	h.rootOnly, err = policy.Save(g, rootOnly, h.polTip, who, "staged")
	must(err)
	rule := func(name string) policy.Rule {
		return policy.Rule{Name: name, Paths: []string{"docs/" + name + "/**"}, Allow: []string{"bob"}, Threshold: 1}
	}
	edit, _ := stage(func(p *policy.Policy) error {
		if err := p.AddPerson(base, "carol", []ssh.PublicKey{carolPub}, now); err != nil {
			return err
		}
		if err := p.SignTargets(rootTUF); err != nil {
			return err
		}
		return p.AddRuleIn(base, "docs", rule("one"), now)
	})
	h.edit1, err = policy.Save(g, edit, h.polTip, who, "staged")
	must(err)
	must(edit.AddRuleIn(base, "docs", rule("two"), now))
	h.edit2, err = policy.Save(g, edit, h.polTip, who, "staged")
	must(err)

	blob := func(data []byte) gitrepo.Hash {
		b, err := g.WriteObject("blob", data)
		must(err)
		return b
	}
	commit := func(root, targets []byte, rules map[string][]byte) gitrepo.Hash {
		var sub []gitrepo.TreeEntry
		for name, data := range rules {
			sub = append(sub, gitrepo.TreeEntry{Mode: 0o100644, Name: name + ".json", Hash: blob(data)})
		}
		st, err := g.WriteTree(sub)
		must(err)
		tree, err := g.WriteTree([]gitrepo.TreeEntry{
			{Mode: 0o100644, Name: policy.RootFile, Hash: blob(root)},
			{Mode: 0o100644, Name: policy.TargetsFile, Hash: blob(targets)},
			{Mode: 0o040000, Name: policy.RulesDir, Hash: st},
		})
		must(err)
		c, err := g.WriteObject("commit", gitrepo.EncodeCommit(tree, []gitrepo.Hash{h.polTip}, who, who, "staged\n"))
		must(err)
		return c
	}
	junk := func(typ string, size int, extra string) []byte {
		var b strings.Builder
		b.WriteString(`{"signatures":[],"signed":{"_type":"` + typ + `","expires":"2027-01-02T03:04:05Z","pad":[`)
		for n := 0; b.Len() < size-1000; n++ {
			if n > 0 {
				b.WriteString(",")
			}
			b.WriteString("[0" + strings.Repeat(",0", 499) + "]")
		}
		b.WriteString("]" + extra + "}}")
		return []byte(b.String())
	}
	rootJSON, targetsJSON, err := signed.Encode()
	must(err)
	files, err := signed.EncodeRuleFiles()
	must(err)
	h.junk["root"] = commit(junk("root", policy.MaxFileSize, ""), targetsJSON, files)
	h.junk["docs"] = commit(rootJSON, targetsJSON, map[string][]byte{"docs": junk("targets", policy.MaxFileSize, "")})
	many := map[string][]byte{"docs": files["docs"]}
	for i := range 16 {
		many[fmt.Sprintf("f%02d", i)] = junk("targets", policy.MaxFileSize-2000, fmt.Sprintf(`,"x":%d`, i))
	}
	h.junk["many"] = commit(rootJSON, targetsJSON, many)
	rootJSON, _, err = rootOnly.Encode()
	must(err)
	h.junk["targets"] = commit(rootJSON, junk("targets", policy.MaxTargetsSize, ""), files)
	return h
}

// TestStagingReplaceCopyWithJunk: a copy of a signed staged change that
// keeps its signatures and adds junk no key signed is refused before it
// is decoded, naming the unsigned files, what they hold and what to do;
// the proposer's own edit of a rule file they may not sign (targets.json
// and its signature unchanged) still replaces their change.
func TestStagingReplaceCopyWithJunk(t *testing.T) {
	h := newCopiedStaging(t)
	short := func(x gitrepo.Hash) string { return x.String()[:12] }
	for name, c := range map[string]struct {
		old   gitrepo.Hash
		files string
	}{
		"root":    {h.signed, "root.json"},
		"docs":    {h.signed, "rules/docs.json"},
		"many":    {h.signed, "rules/f00.json, rules/f01.json, rules/f02.json, rules/f03.json, rules/f04.json and 11 more"},
		"targets": {h.rootOnly, "targets.json"},
	} {
		t.Run(name, func(t *testing.T) {
			next := h.junk[name]
			if err := policy.CheckStaged(h.g, next); err != nil {
				t.Fatalf("the junk must pass CheckStaged: %v", err)
			}
			why, err := StagingReplaceable(h.g, c.old, next, h.polTip)
			want := "the new one (" + short(next) + ") keeps the signatures of the staged change it replaces (" + short(c.old) + ") but holds "
			if err != nil || !strings.HasPrefix(why, want) || !hasAll(why,
				" bytes that no key of the policy in force signed ("+c.files+")",
				fmt.Sprintf("a replacement may hold at most %d such bytes, so the server does not decode it", policy.MaxUnsignedReplacement),
				"sign what it adds with a key of the policy in force (git secure policy sign --staged), or apply what is signed first") {
				t.Fatalf("StagingReplaceable = %q, %v\nwant it to start %q and name %s", why, err, want, c.files)
			}
		})
	}
	for _, c := range []struct{ old, next gitrepo.Hash }{{h.signed, h.edit1}, {h.edit1, h.edit2}, {h.edit2, h.edit1}} {
		if why, err := StagingReplaceable(h.g, c.old, c.next, h.polTip); err != nil || why != "" {
			t.Errorf("the proposer's edit %s over %s: %q, %v; want it accepted", short(c.next), short(c.old), why, err)
		}
	}
}

func hasAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// BenchmarkStagingReplaceCopyWithJunk: what the server (StagingReplaceable,
// pre-receive) spends on a copy of a signed staged change, every signature
// kept, with junk added (newCopiedStaging).
func BenchmarkStagingReplaceCopyWithJunk(b *testing.B) {
	h := newCopiedStaging(b)
	for _, name := range []string{"root", "docs", "many", "targets"} {
		old := h.signed
		if name == "targets" {
			old = h.rootOnly
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if why, err := StagingReplaceable(h.g, old, h.junk[name], h.polTip); err != nil || why == "" {
					b.Fatal(why, err)
				}
			}
		})
	}
}
