package porcelain

import (
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
)

// hostileStaging is a bare repository with a policy in force (polTip, one
// root key that also holds the rules role), a staged change of it signed
// by that key (signed: bob added) and staged changes of it that pass
// policy.CheckStaged but do not decode.
type hostileStaging struct {
	g              *gitrepo.Repo
	polTip, signed gitrepo.Hash
	rootFP         string
	// hostile: a 4 MiB targets.json of small values, unsigned.
	hostile gitrepo.Hash
	// copied: signed's files as they are, signatures and all, and a rule
	// file no file delegates.
	copied gitrepo.Hash
}

func newHostileStaging(t testing.TB) *hostileStaging {
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
	tufSigner, err := sign.TUFSigner(rootSigner)
	must(err)
	_, bobPub := key("bob")

	base, err := policy.New(rootPub, now)
	must(err)
	must(base.SignRoot(tufSigner))
	must(base.SignTargets(tufSigner))
	h := &hostileStaging{g: g, rootFP: sign.Fingerprint(rootPub)}
	h.polTip, err = policy.Save(g, base, gitrepo.ZeroHash, who, "policy")
	must(err)
	next, err := base.Clone()
	must(err)
	must(next.AddPerson(base, "bob", []ssh.PublicKey{bobPub}, now))
	must(next.SignTargets(tufSigner))
	h.signed, err = policy.Save(g, next, h.polTip, who, "staged: add bob")
	must(err)

	blob := func(data []byte) gitrepo.Hash {
		b, err := g.WriteObject("blob", data)
		must(err)
		return b
	}
	commit := func(entries []gitrepo.TreeEntry) gitrepo.Hash {
		tree, err := g.WriteTree(entries)
		must(err)
		c, err := g.WriteObject("commit", gitrepo.EncodeCommit(tree, []gitrepo.Hash{h.polTip}, who, who, "staged\n"))
		must(err)
		return c
	}
	rootJSON, targetsJSON, err := next.Encode()
	must(err)
	h.hostile = commit([]gitrepo.TreeEntry{
		{Mode: 0o100644, Name: policy.RootFile, Hash: blob(rootJSON)},
		{Mode: 0o100644, Name: policy.TargetsFile, Hash: blob(hostileTargets(policy.MaxTargetsSize))},
	})
	stray, err := g.WriteTree([]gitrepo.TreeEntry{{Mode: 0o100644, Name: "stray.json", Hash: blob([]byte(`{"signatures":[],"signed":{"_type":"targets","expires":"2027-01-02T03:04:05Z"}}`))}})
	must(err)
	h.copied = commit([]gitrepo.TreeEntry{
		{Mode: 0o100644, Name: policy.RootFile, Hash: blob(rootJSON)},
		{Mode: 0o100644, Name: policy.TargetsFile, Hash: blob(targetsJSON)},
		{Mode: 0o040000, Name: policy.RulesDir, Hash: stray},
	})
	return h
}

// hostileTargets returns a targets.json of about size bytes that
// policy.CheckStaged accepts (strict JSON, canonical, every array within
// the item bound) and go-tuf's decoder spends some 100 bytes a byte on.
func hostileTargets(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"signatures":[],"signed":{"_type":"targets","expires":"2027-01-02T03:04:05Z","pad":[`)
	for n := 0; b.Len() < size-1000; n++ {
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString("[0" + strings.Repeat(",0", 499) + "]")
	}
	b.WriteString("]}}")
	return []byte(b.String())
}

// TestStagingReplaceUndecodable checks the staged slot's replacement rule
// on staged changes that do not decode: one that holds no signature the
// policy in force trusts goes without being decoded, a signed change
// cannot be replaced by one, nor by a copy of it that keeps its
// signatures but does not decode; and a fetch never takes one in place of
// the clone's own change. Each refusal names why.
func TestStagingReplaceUndecodable(t *testing.T) {
	h := newHostileStaging(t)
	if err := policy.CheckStaged(h.g, h.hostile); err != nil {
		t.Fatalf("the hostile change must pass CheckStaged: %v", err)
	}
	if _, err := policy.Load(h.g, h.hostile); err == nil {
		t.Fatal("the hostile change must not decode")
	}
	short := func(x gitrepo.Hash) string { return x.String()[:12] }
	for name, c := range map[string]struct {
		old, next gitrepo.Hash
		want      string
	}{
		"a signed change over the hostile one": {h.hostile, h.signed, ""},
		"the hostile one over a signed change": {h.signed, h.hostile, "the staged change it holds (" + short(h.signed) + ") is signed by " + h.rootFP + ", and the new one is not signed by them"},
		"a copy that does not decode":          {h.signed, h.copied, "the new one (" + short(h.copied) + ") keeps the signatures of the staged change it replaces (" + short(h.signed) + ") but is not a policy: policy " + h.copied.String() + ": policy: malformed metadata: rule files without a delegation"},
		"a signed change over the copy":        {h.copied, h.signed, ""},
	} {
		t.Run(name, func(t *testing.T) {
			why, err := StagingReplaceable(h.g, c.old, c.next, h.polTip)
			if err != nil || why != c.want {
				t.Fatalf("StagingReplaceable = %q, %v\nwant %q", why, err, c.want)
			}
		})
	}
	for _, next := range []gitrepo.Hash{h.hostile, h.copied} {
		if StagingAddsSignatures(h.g, h.signed, next, h.polTip) {
			t.Errorf("a fetch takes %s in place of the signed change", short(next))
		}
	}
}

// BenchmarkStagingReplaceHostile: what the server (StagingReplaceable,
// pre-receive) and a fetch (StagingAddsSignatures) spend on a staged
// change of a 4 MiB targets.json of small values that does not decode:
// replacing it by a signed change, refusing it in place of one, and a
// fetch offered it in place of the clone's own.
func BenchmarkStagingReplaceHostile(b *testing.B) {
	h := newHostileStaging(b)
	for _, c := range []struct {
		name      string
		old, next gitrepo.Hash
	}{
		{name: "replace-hostile", old: h.hostile, next: h.signed},
		{name: "refuse-hostile", old: h.signed, next: h.hostile},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := StagingReplaceable(h.g, c.old, c.next, h.polTip); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("fetch-hostile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			StagingAddsSignatures(h.g, h.signed, h.hostile, h.polTip)
		}
	})
}
